#!/usr/bin/env bash
# pnpm compose:down: stops and removes the stack's containers and network. The volumes (database,
# desk's signing key) stay; `pnpm compose:down -v` removes them as well.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/docker/lib.sh
compose down --remove-orphans "$@"
