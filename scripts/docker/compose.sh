#!/usr/bin/env bash
# `docker compose` (v2) or `docker-compose` (1.29), whichever is installed, with these arguments.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/docker/lib.sh
compose "$@"
