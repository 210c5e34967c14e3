#!/bin/sh
# Fails the image build when the service folder is incomplete or when something that must never
# ship (dev tools, peer-only dependencies, tests) crept back in, and when /app is too big.
set -eu
app=$1
max_mb=${MAX_APP_MB:-80}
cd "$app"
test -f dist/index.js || { echo "check-app: dist/index.js is missing" >&2; exit 1; }
test -d prisma/migrations || { echo "check-app: prisma/migrations is missing" >&2; exit 1; }
node -e "for (const name of Object.keys(require('./package.json').dependencies ?? {})) require.resolve(name)"
# The generated Prisma client loads its query compiler lazily, at the first query: resolve it now.
for generated in dist/generated/*/internal/class.js; do
  [ -f "$generated" ] || continue
  for module in $(grep -o '@prisma/client/runtime/[A-Za-z0-9_.-]*' "$generated" | sort -u); do
    node -e "require.resolve(process.argv[1], { paths: [process.cwd()] })" "$module" \
      || { echo "check-app: $generated needs $module, which is missing" >&2; exit 1; }
  done
done
bad=0
for pattern in 'prisma@*' '@prisma+studio-core@*' '@prisma+engines*' '@electric-sql+*' 'effect@*' 'typescript@*' 'react@*' 'react-dom@*' 'jest@*' '@swc+*' 'supertest@*'; do
  for hit in node_modules/.pnpm/$pattern; do
    if [ -e "$hit" ]; then echo "check-app: must not ship $hit" >&2; bad=1; fi
  done
done
# A service that queries without Prisma Client (Kysely over pg) ships none of its runtime.
if ! node -e "process.exit(require('./package.json').dependencies?.['@prisma/client'] ? 0 : 1)"; then
  for hit in node_modules/.pnpm/@prisma+client@* node_modules/.pnpm/@prisma+adapter-pg@* dist/generated/prisma; do
    if [ -e "$hit" ]; then echo "check-app: must not ship $hit (the service does not use Prisma Client)" >&2; bad=1; fi
  done
fi
tests=$(find . \( -name '*.test.js' -o -name '*.test.ts' -o -name '*.spec.js' \) -not -path '*/node_modules/.pnpm/*' | head -n 5)
if [ -n "$tests" ]; then echo "check-app: test files must not ship: $tests" >&2; bad=1; fi
size=$(du -sm . | cut -f1)
echo "check-app: $app is ${size} MB (limit ${max_mb} MB)"
du -sm node_modules/.pnpm/* | sort -n | tail -n 8
if [ "$size" -ge "$max_mb" ]; then echo "check-app: over ${max_mb} MB" >&2; bad=1; fi
exit $bad
