# One image recipe for each of the three services. Build from the repository root (the workspace
# is the context) with BuildKit, naming the service and its default port:
#   DOCKER_BUILDKIT=1 docker build --build-arg SERVICE=desk --build-arg PORT=3001 -t msp/desk .
#   (link: SERVICE=link PORT=3002, hr: SERVICE=hr PORT=3003)
# NODE_IMAGE is the base of both stages: the public node:24-bookworm-slim where Docker Hub can be
# reached, or the local msp-base/node:<scripts/docker/node-version> that
# scripts/docker/build-base-images.sh makes.
# Behind a TLS-intercepting proxy, hand its CA bundle in as a BuildKit secret; it is mounted only
# while pnpm and npm download, and no layer of the image contains it:
#   --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt
# Runtime configuration comes from the environment (PORT, DATABASE_URL, REDIS_URL, AUTH_*, ...);
# the service applies its own migrations at start.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
ARG SERVICE
RUN test -n "$SERVICE" || (echo "--build-arg SERVICE=desk|link|hr is required" >&2; exit 1)
WORKDIR /repo
# pnpm at exactly the version the repository pins in package.json "packageManager".
COPY package.json ./
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && npm install --global --no-fund --no-audit "$(node -p "require('./package.json').packageManager.split('+')[0]")"
COPY . .
# Only this service and the workspace packages it depends on ("..."), with their dev tools.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm-store --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && pnpm install --frozen-lockfile --store-dir=/pnpm-store --filter "@msp/${SERVICE}..."
# Dependencies first (pnpm runs workspace scripts in dependency order); generate makes the Prisma client.
RUN pnpm --filter "@msp/${SERVICE}..." run --if-present generate \
 && pnpm --filter "@msp/${SERVICE}..." run build
# A self-contained folder: the service's files plus production dependencies only. --legacy
# because the workspace does not inject workspace packages (pnpm 10 requires one or the other).
# auto-install-peers=false: @prisma/client names the Prisma CLI, TypeScript and React as peers,
# which the compiled service never loads (the client is generated at build time).
RUN --mount=type=cache,id=pnpm-store,target=/pnpm-store --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && pnpm --filter "@msp/${SERVICE}" --prod --config.auto-install-peers=false --store-dir=/pnpm-store deploy --legacy /out
COPY scripts/docker/prune-app.js scripts/docker/check-app.sh /usr/local/lib/msp-build/
# Sources, tests and build configuration are not needed at run time; then fail the build, not the
# container, if something needed is missing or something forbidden crept back in.
RUN node /usr/local/lib/msp-build/prune-app.js /out && sh /usr/local/lib/msp-build/check-app.sh /out

FROM ${NODE_IMAGE} AS runtime
# jemalloc (Debian's libjemalloc2), preloaded for node: under load glibc's malloc kept what the
# threads other than the main one freed (V8's compiler and GC helpers, libuv's pool) in their
# arenas for good, ~17 MB more in desk after `pnpm bench`'s cases than after start, never given
# back. jemalloc returns freed pages after dirty_decay_ms, from its own background threads, so
# also when allocation stops; narenas:2 for the pods' 1-2 CPUs (bench/README.md, "Memory").
# tzdata, the tz database (required in Debian, so already there; named so the build takes the
# newest rules): @msp/calendar reads desk's calendar zones from it, as PostgreSQL does, instead of
# loading ICU (~20 MB RSS).
# Before ARG PORT, so the three services' images share the layer.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libjemalloc2 tzdata \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && ln -s "$(ls /usr/lib/*-linux-gnu/libjemalloc.so.2)" /usr/local/lib/libjemalloc.so.2
ARG PORT=3001
# MALLOC_MMAP_THRESHOLD_ (glibc): for a process that runs without the preload (`pnpm start`). A
# fixed threshold, so glibc never raises it on its own. Unset, the first scrypt (desk hashes client
# secrets with N=2^14, r=8: a 16 MiB buffer, malloc'd and freed on libuv's threads, at start and on
# every token request) lifts it to 16 MiB and the trim threshold to 32 MiB; from then on every freed
# block below 16 MiB stays resident in the arena of the thread that freed it: desk held 256 MB RSS
# after start, 85 MB of it in worker threads' arenas; with the threshold fixed 172 MB
# (bench/README.md, "Memory"). 131072 is glibc's own initial value.
# `pnpm bench` gives the services and the baselines the same allocator (the machine's jemalloc),
# `pnpm start` the same MALLOC_MMAP_THRESHOLD_.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=${PORT} \
    DATA_DIR=/data \
    LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 \
    MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
# Owned by root and read-only for the service user: the code cannot be changed by the process.
COPY --from=build /out ./
# The only writable place (besides /tmp); a volume mounted here inherits this owner.
RUN mkdir -p /data && chown 1000:1000 /data
# Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE ${PORT}
# Liveness only: readiness (/readyz) depends on PostgreSQL and Redis, and an orchestrator that
# restarts unhealthy containers must not restart every replica when the database blips.
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node as PID 1 receives SIGTERM directly; the service drains and exits on it.
# --max-semi-space-size=8 (MB): a young generation of 16 MB. Node 24 sizes it from the memory it
# sees (on a large host a service under load then settled at ~300 MB); 16 MB semispaces kept most
# of Node 24's speed, and 8 keep it too at 15-17 MB less RSS from the start: twice the scavenges,
# each shorter (0.9 s more of them in 200 s of load, req/s and p99 within the noise:
# bench/heap-limit.js with BENCH_HEAP_FLAGS, bench/README.md "Memory").
# --max-old-space-size=256 (MB): the old generation Node itself gives a service in its pod (a
# 384Mi memory limit, k8s/base: Node sizes the heap from the cgroup's limit), now also where no
# limit is set (compose, a large host). Unbounded, Node sizes it from the host's memory (~4 GB on
# 23.5 GB), lets the heap grow to about four times its live size between full collections, and
# V8 keeps the pages a collection frees, resident, in its page pool until a memory-reducing GC,
# which never comes under steady load: desk ended `pnpm bench`'s cases at 240 MB instead of 177,
# link a long list run at 322 instead of 200, at the same req/s and p99 (bench/heap-limit.js).
# --no-allocation-site-pretenuring: otherwise V8 allocates an allocation site's objects straight in
# the old generation once enough of them are found alive at a scavenge; a request's rows and
# records, caught in flight, then fill the old generation with garbage that only a full collection
# frees, and full collections are what a paced load feels (docs/adr/0009-no-pretenuring.md).
# `pnpm bench` starts services with the flags given here.
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=8", "--max-old-space-size=256", "--no-allocation-site-pretenuring", "dist/index.js"]
