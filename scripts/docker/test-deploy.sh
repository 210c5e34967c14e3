#!/usr/bin/env bash
# pnpm test:deploy: builds the images from this working tree, starts the compose stack from
# nothing (its own project, fresh volumes), runs the end-to-end checks through the ingress
# (scripts/docker/e2e.js: smoke with an OAuth client that follows desk's metadata, scale-out to two
# desk replicas, graceful stop under writes) and removes the stack again. Exit code 0 only when
# everything passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/docker/lib.sh
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-msp-deploy-test}
export INGRESS=http://127.0.0.1:${INGRESS_HOST_PORT:-8080}
start=$(date +%s)

cleanup() { COMPOSE_PROFILES=scale compose down -v --remove-orphans >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup

echo "== images"
scripts/docker/build-images.sh
echo "== image checks"
failed=0
for service in desk link hr; do
  image=msp/$service:dev
  user=$("$DOCKER" image inspect -f '{{.Config.User}}' "$image")
  size=$(("$("$DOCKER" image inspect -f '{{.Size}}' "$image")" / 1000000))
  app=$("$DOCKER" run --rm --entrypoint du "$image" -sm /app | cut -f1)
  # The proxy CA was a build secret: neither a file nor an environment variable of the image.
  leak=$("$DOCKER" run --rm --entrypoint sh "$image" -c 'ls /run/secrets 2>/dev/null; env | grep -i extra_ca || true')
  echo "   $image: user $user, image $size MB, /app $app MB"
  [[ $user =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || { echo "   FAIL $image must run as a numeric non-root user" >&2; failed=1; }
  [ "$size" -lt 300 ] || { echo "   FAIL $image is not under 300 MB" >&2; failed=1; }
  [ "$app" -lt 80 ] || { echo "   FAIL $image: /app is not under 80 MB" >&2; failed=1; }
  [ -z "$leak" ] || { echo "   FAIL $image carries the build CA: $leak" >&2; failed=1; }
done
[ "$failed" = 0 ]
echo "== compose up (fresh volumes)"
scripts/docker/compose-up.sh
echo "== e2e"
node scripts/docker/e2e.js smoke
# By path (like the issuer) and by host name; either way the pages get their token from the
# issuer's token endpoint (cross-origin from the *.localhost pages).
port=${INGRESS_HOST_PORT:-8080}
for route in "by-path http://localhost:$port/{service}" "by-host http://{service}.localhost:$port"; do
  echo "== reference pages through the ingress, ${route% *} (chromium: packages/docs-e2e)"
  DOCS_E2E_SERVICE_URL="${route#* }" DOCS_E2E_TOKEN_URL="http://localhost:$port/desk/api/v1/auth/token" \
    DOCS_E2E_CLIENT_ID="${BOOTSTRAP_CLIENT_ID:-dev-client}" DOCS_E2E_CLIENT_SECRET="${BOOTSTRAP_CLIENT_SECRET:-dev-client-secret-change-me}" \
    DOCS_E2E_SCREENSHOTS="/tmp/msp-deploy-docs-screenshots/${route% *}" JEST_RESULTS_DIR=/tmp \
    pnpm --filter @msp/docs-e2e test
done
echo "== scale-out: a second desk replica"
COMPOSE_PROFILES=scale compose up -d >/dev/null 2>&1
scripts/docker/wait-healthy.sh
node scripts/docker/e2e.js scale
echo "== graceful stop under writes"
STOP_COMMAND="COMPOSE_PROFILES=scale scripts/docker/compose.sh stop desk-2 desk" \
  RESTART_COMMAND="COMPOSE_PROFILES=scale scripts/docker/compose-up.sh >/dev/null" \
  node scripts/docker/e2e.js graceful
echo "== compose down"
trap - EXIT
cleanup
echo "test:deploy passed in $(($(date +%s) - start)) s"
