#!/usr/bin/env bash
# Waits until every running container of the compose project that has a health check is healthy
# (Compose v2's `up --wait`, which docker-compose 1.29 lacks). Gives up after WAIT_SECONDS (180).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/docker/lib.sh
deadline=$(($(date +%s) + ${WAIT_SECONDS:-180}))
while :; do
  pending=()
  for id in $(compose ps -q); do
    state=$("$DOCKER" inspect -f '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$id")
    set -- $state
    if [ "$2" = running ] && [ "$3" != healthy ] && [ "$3" != none ]; then pending+=("$1:$3"); fi
    if [ "$2" = exited ] && [ "$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$id")" != 0 ]; then
      echo "$1 exited with an error:" >&2; "$DOCKER" logs --tail 30 "$id" >&2; exit 1
    fi
  done
  if [ ${#pending[@]} -eq 0 ]; then echo "all containers healthy"; exit 0; fi
  if [ "$(date +%s)" -ge "$deadline" ]; then echo "not healthy in time: ${pending[*]}" >&2; exit 1; fi
  sleep 2
done
