# One image recipe for each of the three services. Build from the repository root (the workspace
# is the context), naming the service and its default port:
#   docker build --build-arg SERVICE=desk --build-arg PORT=3001 -t msp/desk .
#   docker build --build-arg SERVICE=link --build-arg PORT=3002 -t msp/link .
#   docker build --build-arg SERVICE=hr   --build-arg PORT=3003 -t msp/hr .
# Runtime configuration comes from the environment (PORT, DATABASE_URL, REDIS_URL, AUTH_*, ...);
# the service applies its own migrations at start.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
ARG SERVICE
RUN test -n "$SERVICE" || (echo "--build-arg SERVICE=desk|link|hr is required" >&2; exit 1)
WORKDIR /repo
# pnpm at exactly the version the repository pins in package.json "packageManager".
COPY package.json ./
RUN npm install --global "$(node -p "require('./package.json').packageManager.split('+')[0]")"
COPY . .
# Only this service and the workspace packages it depends on ("..."), with their dev tools.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm-store \
    pnpm install --frozen-lockfile --store-dir=/pnpm-store --filter "@msp/${SERVICE}..."
# Dependencies first (pnpm runs workspace scripts in dependency order); generate makes the Prisma client.
RUN pnpm --filter "@msp/${SERVICE}..." run --if-present generate \
 && pnpm --filter "@msp/${SERVICE}..." run build
# A self-contained folder: the service's files plus production dependencies only. --legacy
# because the workspace does not inject workspace packages (pnpm 10 requires one or the other).
RUN --mount=type=cache,id=pnpm-store,target=/pnpm-store \
    pnpm --filter "@msp/${SERVICE}" --prod --store-dir=/pnpm-store deploy --legacy /out
# Fail the build, not the container, if something the service needs at run time is missing.
RUN cd /out \
 && test -f dist/index.js \
 && test -d prisma/migrations \
 && node -e "for (const name of Object.keys(require('./package.json').dependencies ?? {})) if (name.startsWith('@msp/')) require.resolve(name)"

FROM ${NODE_IMAGE} AS runtime
ARG PORT=3001
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=${PORT} \
    DATA_DIR=/data
WORKDIR /app
# Owned by root and read-only for the service user: the code cannot be changed by the process.
COPY --from=build /out ./
# The only writable place (besides /tmp); a volume mounted here inherits this owner.
RUN mkdir -p /data && chown 1000:1000 /data
# Numeric, so Kubernetes' runAsNonRoot can verify it (uid 1000 is "node" in this image).
USER 1000:1000
EXPOSE ${PORT}
# Liveness only: readiness (/readyz) depends on PostgreSQL and Redis, and an orchestrator that
# restarts unhealthy containers must not restart every replica when the database blips.
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node as PID 1 receives SIGTERM directly; the service drains and exits on it.
STOPSIGNAL SIGTERM
CMD ["node", "dist/index.js"]
