# Shared by the scripts in scripts/docker: which docker client and which compose to run.
# DOCKER: a client that builds with BuildKit (RUN --mount). A docker CLI without the buildx
# plugin cannot, so Debian's docker.io client (/usr/bin/docker) is preferred when installed.
if [ -z "${DOCKER:-}" ]; then
  if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER=$(command -v docker); fi
fi
export DOCKER DOCKER_BUILDKIT=1
# The base of the service images (and of compose's one-shot signing-key job): the local
# msp-base/node of the Node version in scripts/docker/node-version, unless NODE_IMAGE names another.
NODE_IMAGE=${NODE_IMAGE:-msp-base/node:$(cat "$(dirname "${BASH_SOURCE[0]}")/node-version")}
export NODE_IMAGE
# Compose v2 (docker compose) when present, else docker-compose 1.29; both read docker-compose.yml.
compose() {
  if "$DOCKER" compose version >/dev/null 2>&1; then "$DOCKER" compose "$@"; else docker-compose "$@"; fi
}
