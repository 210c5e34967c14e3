import { spawn, type ChildProcess } from 'node:child_process';
import dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@msp/db';

/*
 * desk, link and hr as they are deployed: their built dist/index.js as processes on real ports,
 * each with a fresh database of its own and the real Redis, configured only through environment
 * variables. desk issues the tokens; link and hr verify them against desk's JWKS.
 */

const SERVICES = ['desk', 'link', 'hr'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface RunningService {
  name: ServiceName;
  origin: string;
  apiUrl: string;
}

export interface Stack {
  services: Record<ServiceName, RunningService>;
  /** The tenant client desk was started with (BOOTSTRAP_CLIENT_ID/SECRET): every scope. */
  client: { clientId: string; clientSecret: string };
  tokenUrl: string;
  /** What a process wrote to stdout/stderr, for a failure message. */
  output(name: ServiceName): string;
  close(): Promise<void>;
}

const serviceDir = (name: ServiceName) => path.dirname(require.resolve(`@msp/${name}/package.json`));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls /readyz until the service answers 200, or fails with what the process printed. */
async function waitUntilReady(origin: string, child: ChildProcess, output: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}:\n${output()}`);
    const ready = await fetch(`${origin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A stack that is already running, e.g. the compose stack behind its ingress (pnpm test:deploy):
 * DOCS_E2E_SERVICE_URL is the URL of a service's /api/v1 without it, with `{service}` in place of
 * its name: an origin (`http://{service}.localhost:8080`) or one with a path prefix
 * (`http://localhost:8080/{service}`). DOCS_E2E_CLIENT_ID / DOCS_E2E_CLIENT_SECRET: a client of it.
 * DOCS_E2E_TOKEN_URL: the token endpoint the pages use (the issuer's), when it is not under desk's URL.
 */
function runningStack(template: string): Stack {
  const clientId = process.env.DOCS_E2E_CLIENT_ID;
  const clientSecret = process.env.DOCS_E2E_CLIENT_SECRET;
  if (!clientId || !clientSecret)
    throw new Error('DOCS_E2E_SERVICE_URL needs DOCS_E2E_CLIENT_ID and DOCS_E2E_CLIENT_SECRET');
  const services = Object.fromEntries(
    SERVICES.map((name) => {
      const base = template.replace('{service}', name).replace(/\/$/, '');
      return [name, { name, origin: new URL(base).origin, apiUrl: `${base}/api/v1` }];
    }),
  ) as Record<ServiceName, RunningService>;
  return {
    services,
    client: { clientId, clientSecret },
    tokenUrl: process.env.DOCS_E2E_TOKEN_URL || `${services.desk.apiUrl}/auth/token`,
    output: () => '(a running stack: see its own logs)',
    close: async () => {},
  };
}

export async function startStack(): Promise<Stack> {
  const template = process.env.DOCS_E2E_SERVICE_URL;
  if (template) return runningStack(template);
  const databases: TestDatabase[] = [];
  const children: ChildProcess[] = [];
  const outputs = new Map<ServiceName, string[]>();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-e2e-'));
  const ports = Object.fromEntries(
    await Promise.all(SERVICES.map(async (name) => [name, await freePort()] as const)),
  ) as Record<ServiceName, number>;
  const services = Object.fromEntries(
    SERVICES.map((name) => {
      const origin = `http://127.0.0.1:${ports[name]}`;
      return [name, { name, origin, apiUrl: `${origin}/api/v1` }];
    }),
  ) as Record<ServiceName, RunningService>;
  const issuer = services.desk.apiUrl;
  const client = {
    clientId: `docs-e2e-${randomBytes(4).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
  };

  const close = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await Promise.all(databases.map((database) => database.drop().catch(() => undefined)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    for (const name of SERVICES) {
      const database = await createTestDatabase({ migrationsDir: path.join(serviceDir(name), 'prisma/migrations') });
      databases.push(database);
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        NODE_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(ports[name]),
        DATABASE_URL: database.url,
        REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        LOG_LEVEL: 'warn',
        AUTH_ISSUER: issuer,
        AUTH_JWKS_URL: `${issuer}/.well-known/jwks.json`,
        DATA_DIR: path.join(dataDir, name),
        ...(name === 'desk'
          ? {
              BOOTSTRAP_CLIENT_ID: client.clientId,
              BOOTSTRAP_CLIENT_SECRET: client.clientSecret,
              BOOTSTRAP_TENANT: 'docs-e2e',
              // The three pages' origins, as the development default lists them for the usual ports.
              CORS_ORIGINS: SERVICES.map((other) => services[other].origin).join(','),
            }
          : {}),
      };
      const lines: string[] = [];
      outputs.set(name, lines);
      const child = spawn(process.execPath, [path.join(serviceDir(name), 'dist/index.js')], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      child.stdout!.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
      // link and hr fetch desk's JWKS on their first token, so desk comes first.
      await waitUntilReady(services[name].origin, child, () => lines.join(''));
    }
  } catch (error) {
    await close();
    throw error;
  }

  return {
    services,
    client,
    tokenUrl: `${issuer}/auth/token`,
    output: (name) => (outputs.get(name) ?? []).join(''),
    close,
  };
}

/**
 * Names under .localhost are loopback (RFC 6761 §6.3): chromium knows it, glibc's resolver does
 * not, so the test's own requests resolve them here.
 */
const lookup: typeof dns.lookup = ((
  hostname: string,
  options: dns.LookupOptions,
  callback: (...args: unknown[]) => void,
) => {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
  }
  return dns.lookup(hostname, options, callback as never);
}) as typeof dns.lookup;

/** A JSON POST that answers status and parsed body. */
function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        lookup,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> });
          } catch {
            reject(new Error(`POST ${url}: ${res.statusCode} ${text.slice(0, 300)}`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A token of the stack's client, for setting up data the pages then list. */
export async function clientToken(stack: Stack): Promise<string> {
  const { status, json } = await postJson(stack.tokenUrl, {
    grant_type: 'client_credentials',
    client_id: stack.client.clientId,
    client_secret: stack.client.clientSecret,
  });
  if (status !== 200) throw new Error(`token: ${status} ${JSON.stringify(json)}`);
  return String(json['access_token']);
}

export async function post(url: string, token: string, body: unknown): Promise<Record<string, unknown>> {
  const { status, json } = await postJson(url, body, { Authorization: `Bearer ${token}` });
  if (status !== 201) throw new Error(`POST ${url}: ${status} ${JSON.stringify(json)}`);
  return json;
}
