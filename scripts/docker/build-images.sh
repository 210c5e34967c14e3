#!/usr/bin/env bash
# Builds the images msp/desk:dev, msp/link:dev and msp/hr:dev from the working tree (the base
# images first, when missing). --missing builds only the images that do not exist yet.
# A CA bundle for a TLS-intercepting proxy is handed to the build as the BuildKit secret "ca":
# CA_BUNDLE, else NODE_EXTRA_CA_CERTS, else the system bundle, when that file exists. It is never
# part of an image.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/docker/lib.sh
if [[ $NODE_IMAGE == msp-base/* ]]; then scripts/docker/build-base-images.sh >/dev/null; fi

secret=()
# Default: the system bundle, which holds the proxy's CA on a machine that trusts it.
ca=${CA_BUNDLE:-${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}}
if [ -n "$ca" ] && [ -s "$ca" ]; then secret=(--secret "id=ca,src=$ca"); fi

for spec in desk:3001 link:3002 hr:3003; do
  service=${spec%%:*}
  port=${spec##*:}
  if [ "${1:-}" = --missing ] && "$DOCKER" image inspect "msp/$service:dev" >/dev/null 2>&1; then continue; fi
  echo "== msp/$service:dev"
  start=$(date +%s)
  "$DOCKER" build --progress=plain "${secret[@]}" --build-arg "NODE_IMAGE=$NODE_IMAGE" \
    --build-arg "SERVICE=$service" --build-arg "PORT=$port" -t "msp/$service:dev" . >"/tmp/msp-build-$service.log" 2>&1 \
    || { tail -n 40 "/tmp/msp-build-$service.log" >&2; echo "building msp/$service:dev failed (log: /tmp/msp-build-$service.log)" >&2; exit 1; }
  grep -o 'check-app: .* MB (limit .*)' "/tmp/msp-build-$service.log" | tail -n 1 || true
  echo "   $(($(date +%s) - start)) s, image $("$DOCKER" image inspect -f '{{.Size}}' "msp/$service:dev" | awk '{printf "%d MB", $1 / 1000000}')"
done
