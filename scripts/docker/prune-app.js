// Removes from a `pnpm deploy` folder what a service never loads at run time. pnpm's deploy keeps
// every package the lockfile resolved, including the peer dependencies of @prisma/client (the
// Prisma CLI with Studio, PGlite and effect, TypeScript, React), which the generated client never
// loads. Kept: what the service's package.json depends on, followed through dependencies,
// optionalDependencies and peer dependencies, except the peers named below. Everything else in
// node_modules/.pnpm goes, then the service's sources and tests, source maps, declarations and
// the query compilers @prisma/client ships for other databases and runtimes (each service's
// generator picks the fast or the small PostgreSQL one).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const app = path.resolve(process.argv[2]);
const PEER_ONLY = new Set(['prisma', 'typescript', 'react', 'react-dom']);
const store = path.join(app, 'node_modules', '.pnpm');

const keep = new Set(); // real directories of packages in node_modules/.pnpm
function visit(fromDir, manifest) {
  const names = [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.optionalDependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}).filter(
      (name) => !PEER_ONLY.has(name) && !name.startsWith('@types/'),
    ),
  ];
  for (const name of names) {
    let dir;
    for (let d = fromDir; ; d = path.dirname(d)) {
      const candidate = path.join(d, 'node_modules', name);
      if (fs.existsSync(candidate)) {
        dir = fs.realpathSync(candidate);
        break;
      }
      if (d === path.dirname(d)) break;
    }
    if (!dir || keep.has(dir)) continue; // optional or peer that is not installed
    keep.add(dir);
    visit(dir, JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')));
  }
}
visit(app, JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')));

const keepEntries = new Set(
  [...keep]
    .filter((dir) => dir.startsWith(store + path.sep))
    .map((dir) => path.relative(store, dir).split(path.sep)[0]),
);
let removed = 0;
for (const entry of fs.readdirSync(store)) {
  if (entry.startsWith('.') || entry === 'node_modules' || keepEntries.has(entry)) continue;
  fs.rmSync(path.join(store, entry), { recursive: true, force: true });
  removed += 1;
}

for (const name of ['src', 'test', 'jest.config.js', 'tsconfig.json', 'tsconfig.build.json', 'prisma.config.ts']) {
  fs.rmSync(path.join(app, name), { recursive: true, force: true });
}

const DROP_FILE = /\.(map|d\.ts|d\.mts|d\.cts|test\.js|spec\.js)$/;
function sweep(dir, inPrismaRuntime) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      if (!fs.existsSync(full)) fs.unlinkSync(full); // a link into something removed above
    } else if (entry.isDirectory()) {
      sweep(full, inPrismaRuntime || full.endsWith(path.join('@prisma', 'client', 'runtime')));
    } else if (DROP_FILE.test(entry.name)) {
      fs.unlinkSync(full);
    } else if (
      inPrismaRuntime &&
      (/^(query_compiler_|wasm-compiler-edge)/.test(entry.name) || entry.name.endsWith('.mjs')) &&
      !/^query_compiler_(fast|small)_bg\.postgresql\.(js|wasm-base64\.js)$/.test(entry.name)
    ) {
      fs.unlinkSync(full);
    }
  }
}
sweep(app, false);
console.log(`prune-app: kept ${keepEntries.size} packages, removed ${removed}`);
