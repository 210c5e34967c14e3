// The production images' Node version is written once, in scripts/docker/node-version: the scripts
// read it (build-base-images.sh, lib.sh for compose), and the places that must spell it out as a
// literal (docker-compose.yml's defaults for a bare `docker compose`, the Dockerfile's public base,
// the operations page of the docs) are checked here against it, so a bump cannot leave one of them behind.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const version = read('scripts/docker/node-version').trim();

test('scripts/docker/node-version holds one exact Node version', () => {
  expect(version).toMatch(/^\d+\.\d+\.\d+$/);
});

test("docker-compose.yml's defaults name the local base image of that version, and no other", () => {
  const named = [...read('docker-compose.yml').matchAll(/msp-base\/node:([\w.-]+)/g)].map((m) => m[1]);
  expect(named.length).toBeGreaterThan(0);
  expect(new Set(named)).toEqual(new Set([version]));
});

test("the Dockerfile's public base, and the one docker-compose.yml suggests, are that version's major line", () => {
  const major = version.split('.')[0];
  expect(read('Dockerfile')).toMatch(new RegExp(`^ARG NODE_IMAGE=node:${major}-bookworm-slim$`, 'm'));
  expect([...read('docker-compose.yml').matchAll(/NODE_IMAGE=node:(\d+)-bookworm-slim/g)].map((m) => m[1])).toEqual([
    major,
  ]);
});

test('docs/operations.md names the base image of that version', () => {
  const page = read('docs/operations.md');
  expect([...page.matchAll(/msp-base\/node:([\w.-]+)/g)].map((m) => m[1])).toEqual([version]);
  expect([...page.matchAll(/NODE_IMAGE=node:(\d+)-bookworm-slim/g)].map((m) => m[1])).toEqual([version.split('.')[0]]);
});
