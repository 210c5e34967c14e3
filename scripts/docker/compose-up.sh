#!/usr/bin/env bash
# pnpm compose:up: builds the images that are missing (--build: all of them, from the working
# tree), starts the stack detached and returns once every container is healthy. Extra arguments
# go to `compose up` (e.g. --scale desk=2).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/docker/lib.sh
build=--missing
args=()
for arg in "$@"; do
  if [ "$arg" = --build ]; then build=; else args+=("$arg"); fi
done
scripts/docker/build-images.sh $build
compose up -d "${args[@]}"
scripts/docker/wait-healthy.sh
