import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, databaseUrlFor, dropDatabase, testServerUrl } from '@msp/db';
import { freePort } from '@msp/testkit';
import { thumbprint } from '../src/auth/signing-key';
import { loadDeskConfig } from '../src/config';
import { DESK_ROOT, ensureBuiltDesk, ensureBuiltService, startNode, stop, type Running } from './support/built-desk';

/*
 * Signing-key rotation under running services: the built desk (child process) signs with key A and
 * hr (built, child process) verifies through desk's JWKS. desk restarts with key B and A as
 * JWT_PREVIOUS_PUBLIC_KEYS: hr accepts tokens of both. desk restarts with B only: A's tokens are refused.
 */

const CLIENT_ID = 'rotation-admin';
const CLIENT_SECRET = randomBytes(24).toString('base64url');

function newKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    kid: thumbprint(publicKey),
  };
}

const databases: string[] = [];
async function newDatabase(label: string): Promise<string> {
  const name = `t_${label}_rot_${randomBytes(6).toString('hex')}`;
  await createDatabase(testServerUrl(), name);
  databases.push(name);
  return databaseUrlFor(testServerUrl(), name);
}

let deskPort: number;
let hrPort: number;
let deskDatabase: string;
let hrDatabase: string;
let dataDir: string;
let deskDist: string;
let hrDist: string;
let desk: Running | undefined;
let hr: Running | undefined;
const keyA = newKey();
const keyB = newKey();

const deskUrl = () => `http://127.0.0.1:${deskPort}`;
const hrUrl = () => `http://127.0.0.1:${hrPort}`;

async function startDesk(privatePem: string, previous?: string) {
  desk = await startNode(
    path.join(deskDist, 'index.js'),
    DESK_ROOT,
    {
      PORT: String(deskPort),
      DATABASE_URL: deskDatabase,
      DATA_DIR: dataDir,
      AUTH_ISSUER: `${deskUrl()}/api/v1`,
      JWT_PRIVATE_KEY: privatePem,
      ...(previous ? { JWT_PREVIOUS_PUBLIC_KEYS: previous } : {}),
      BOOTSTRAP_CLIENT_ID: CLIENT_ID,
      BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
    },
    deskUrl(),
  );
}

async function startHr() {
  hr = await startNode(
    path.join(hrDist, 'index.js'),
    path.dirname(hrDist),
    {
      PORT: String(hrPort),
      DATABASE_URL: hrDatabase,
      DATA_DIR: dataDir,
      AUTH_ISSUER: `${deskUrl()}/api/v1`,
      AUTH_JWKS_URL: `${deskUrl()}/api/v1/.well-known/jwks.json`,
    },
    hrUrl(),
  );
}

async function token(): Promise<string> {
  const response = await fetch(`${deskUrl()}/api/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      scope: 'read:hr',
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()).kid as string;
const jwksKids = async () =>
  ((await (await fetch(`${deskUrl()}/api/v1/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map(
    (k) => k.kid,
  );
const hrStatus = async (jwt: string) =>
  (await fetch(`${hrUrl()}/api/v1/me`, { headers: { authorization: `Bearer ${jwt}` } })).status;

/**
 * hr refetches desk's JWKS for an unknown kid at most once per cooldown (5 s by default): a token
 * of a key hr has not seen yet is accepted as soon as that allows. Polls, bounded, never a fixed sleep.
 */
async function hrStatusOnceSettled(jwt: string, wanted: number): Promise<number> {
  let status = await hrStatus(jwt);
  for (let attempt = 0; status !== wanted && attempt < 40; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    status = await hrStatus(jwt);
  }
  return status;
}

beforeAll(async () => {
  deskDist = ensureBuiltDesk();
  hrDist = ensureBuiltService('hr');
  [deskPort, hrPort] = [await freePort(), await freePort()];
  deskDatabase = await newDatabase('desk');
  hrDatabase = await newDatabase('hr');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-rotation-'));
}, 240_000);

afterAll(async () => {
  await stop(desk);
  await stop(hr);
  for (const name of databases) await dropDatabase(testServerUrl(), name);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

test(
  'When desk rotates from key A to key B with A kept as previous, then hr accepts tokens of ' +
    "both; once A is dropped, A's tokens are refused and B's accepted",
  async () => {
    // 1. desk signs with A; hr verifies through desk's JWKS.
    await startDesk(keyA.privatePem);
    await startHr();
    expect(await jwksKids()).toEqual([keyA.kid]);
    const tokenA = await token();
    expect(kidOf(tokenA)).toBe(keyA.kid);
    expect(await hrStatus(tokenA)).toBe(200);

    // 2. Rotation: desk restarts with B, and A as a previous key (given as its public PEM).
    await stop(desk);
    await startDesk(keyB.privatePem, keyA.publicPem);
    expect(await jwksKids()).toEqual([keyB.kid, keyA.kid]);
    const tokenB = await token();
    expect(kidOf(tokenB)).toBe(keyB.kid);
    expect(await hrStatusOnceSettled(tokenB, 200)).toBe(200); // hr fetches the JWKS again for the new kid
    expect(await hrStatus(tokenA)).toBe(200); // the old key's token still works
    // desk itself accepts both too.
    for (const jwt of [tokenA, tokenB])
      expect((await fetch(`${deskUrl()}/api/v1/me`, { headers: { authorization: `Bearer ${jwt}` } })).status).toBe(200);

    // 3. A is dropped. hr caches the JWKS for up to 10 minutes, so a key dropped from desk is refused
    // by a running hr at the latest when that cache expires; a restarted hr (as here) at once.
    await stop(desk);
    await startDesk(keyB.privatePem);
    await stop(hr);
    await startHr();
    expect(await jwksKids()).toEqual([keyB.kid]);
    expect(await hrStatus(tokenA)).toBe(401);
    expect(await hrStatus(tokenB)).toBe(200);
    expect((await fetch(`${deskUrl()}/api/v1/me`, { headers: { authorization: `Bearer ${tokenA}` } })).status).toBe(
      401,
    );
  },
  120_000,
);

test('When JWT_PREVIOUS_PUBLIC_KEYS is not a PEM key, then desk refuses to start and names the variable', async () => {
  const child = spawn(process.execPath, [path.join(deskDist, 'index.js')], {
    cwd: DESK_ROOT,
    env: {
      PATH: process.env.PATH!,
      PORT: '0',
      DATABASE_URL: deskDatabase,
      DATA_DIR: dataDir,
      JWT_PREVIOUS_PUBLIC_KEYS: 'not a key',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).not.toBe(0);
  expect(output).toContain('JWT_PREVIOUS_PUBLIC_KEYS');
}, 60_000);

describe('JWT_PREVIOUS_PUBLIC_KEYS', () => {
  test(
    'When it holds several PEM blocks (public keys or old private keys, literal \\n allowed), then ' +
      'each becomes a verification key with its thumbprint kid, duplicates once',
    () => {
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const raw = [
        keyA.publicPem,
        keyB.privatePem.replace(/\n/g, '\\n'),
        rsa.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
        keyA.publicPem,
      ].join('\n');
      const { previousPublicKeys } = loadDeskConfig({
        DATABASE_URL: 'postgres://x@127.0.0.1/desk',
        JWT_PREVIOUS_PUBLIC_KEYS: raw,
      });
      expect(previousPublicKeys.map((key) => [key.kid, key.alg])).toEqual([
        [keyA.kid, 'ES256'],
        [keyB.kid, 'ES256'],
        [thumbprint(rsa.publicKey), 'RS256'],
      ]);
    },
  );

  test('When a block is no usable key, then the configuration is refused naming the variable', () => {
    const weak = generateKeyPairSync('ec', { namedCurve: 'secp384r1' })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    for (const raw of ['not a key', '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----', weak]) {
      expect(() =>
        loadDeskConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/desk', JWT_PREVIOUS_PUBLIC_KEYS: raw }),
      ).toThrow(/JWT_PREVIOUS_PUBLIC_KEYS/);
    }
  });
});
