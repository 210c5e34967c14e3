# Shared by the scripts in scripts/docker: which docker client and which compose to run.
# DOCKER: a client that builds with BuildKit (RUN --mount). A docker CLI without the buildx
# plugin cannot, so Debian's docker.io client (/usr/bin/docker) is preferred when installed.
if [ -z "${DOCKER:-}" ]; then
  if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER=$(command -v docker); fi
fi
export DOCKER DOCKER_BUILDKIT=1
# Compose v2 (docker compose) when present, else docker-compose 1.29; both read docker-compose.yml.
compose() {
  if "$DOCKER" compose version >/dev/null 2>&1; then "$DOCKER" compose "$@"; else docker-compose "$@"; fi
}
