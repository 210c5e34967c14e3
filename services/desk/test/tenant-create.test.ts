import { spawn } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { randomBytes } from 'node:crypto';
import { createDatabase, databaseUrlFor, dropDatabase, testServerUrl } from '@msp/db';
import { createLogger } from '@msp/http';
import { testWebhookSecrets } from '@msp/testkit';
import { createDeskApp } from '../src/app';
import { verifySecret } from '../src/auth/secrets';
import { generateSigningKey } from '../src/auth/signing-key';
import { createDb, type DeskDatabase } from '../src/db';
import { createOracle, type Oracle } from './support/oracle';
import { DESK_ROOT, ensureBuiltDesk } from './support/built-desk';

const BASE = '/api/v1';
const database = { name: `t_desk_cli_${randomBytes(8).toString('hex')}`, url: '' };
let db: Oracle;
let deskDatabase: DeskDatabase;
let cli: string;

beforeAll(async () => {
  cli = path.join(ensureBuiltDesk(), 'cli/tenant-create.js');
  // An empty database: the command applies desk's migrations itself.
  await createDatabase(testServerUrl(), database.name);
  database.url = databaseUrlFor(testServerUrl(), database.name);
  db = createOracle(database.url);
  deskDatabase = createDb(database.url);
}, 120_000);
afterAll(async () => {
  await Promise.all([db.$disconnect(), deskDatabase.close()]);
  await dropDatabase(testServerUrl(), database.name);
});

function run(args: string[], env: Record<string, string | undefined> = { DATABASE_URL: database.url }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: DESK_ROOT, env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('node dist/cli/tenant-create.js <slug>', () => {
  test('When a new slug is given, then it prints only the JSON of the tenant and its administrator client, which gets a token for that tenant', async () => {
    const result = await run(['acme-msp']);
    expect(result.code).toBe(0);
    expect(result.stdout.endsWith('\n')).toBe(true);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const printed = JSON.parse(result.stdout);
    expect(Object.keys(printed).sort()).toEqual(['client_id', 'client_secret', 'tenant_id']);
    expect(result.stderr).toContain('acme-msp');
    expect(result.stderr).not.toContain(printed.client_secret);

    const tenant = await db.tenant.findUniqueOrThrow({ where: { slug: 'acme-msp' } });
    expect(tenant.id).toBe(printed.tenant_id);
    const client = await db.apiClient.findUniqueOrThrow({ where: { clientId: printed.client_id } });
    expect(client).toMatchObject({ tenantId: tenant.id, revokedAt: null });
    expect(client.scopes).toEqual(expect.arrayContaining(['admin:tenant', 'read:tickets', 'write:hr']));
    expect(client.secretHash).not.toContain(printed.client_secret);
    expect(await verifySecret(printed.client_secret, client.secretHash)).toBe(true);

    // The printed credentials work at desk's token endpoint and manage that tenant's clients.
    const { app } = createDeskApp({
      webhookSecrets: testWebhookSecrets(),
      database: deskDatabase,
      logger: createLogger({ service: 'desk', level: 'error' }),
      signingKey: generateSigningKey(),
      settings: {
        issuer: 'http://127.0.0.1:1/api/v1',
        audience: 'msp-api',
        rateLimitPerMinute: 600,
        tokenRateLimitPerMinute: 1000,
        refreshTokenTtlDays: 30,
      },
    });
    const granted = await request(app)
      .post(`${BASE}/auth/token`)
      .send({ grant_type: 'client_credentials', client_id: printed.client_id, client_secret: printed.client_secret })
      .expect(200);
    const claims = JSON.parse(Buffer.from(granted.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims.tenant_id).toBe(printed.tenant_id);
    expect(claims.scope.split(' ')).toContain('admin:tenant');
  });

  test('When the slug is taken, then it exits 1, prints nothing on stdout, says so on stderr and changes nothing', async () => {
    await run(['taken-one']);
    const before = { tenants: await db.tenant.count(), clients: await db.apiClient.count() };
    const result = await run(['taken-one']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/slug "taken-one" is taken/);
    expect({ tenants: await db.tenant.count(), clients: await db.apiClient.count() }).toEqual(before);
  });

  test('When the slug is missing, invalid or there are several, then it exits 2 with the usage on stderr and creates nothing', async () => {
    const before = await db.tenant.count();
    for (const args of [[], ['Bad Slug'], ['-x'], ['a', 'b'], ['x'.repeat(64)]]) {
      const result = await run(args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('usage: tenant-create <slug>');
    }
    expect(await db.tenant.count()).toBe(before);
  });

  test('When DATABASE_URL is missing or unreachable, then it exits non-zero with a clear message and prints nothing on stdout', async () => {
    const missing = await run(['new-one'], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('DATABASE_URL is not set');
    const unreachable = await run(['new-one'], { DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/desk' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toBe('');
    expect(unreachable.stderr).toContain("cannot prepare desk's database at postgres://postgres:***@127.0.0.1:1/desk");
    expect(unreachable.stderr).not.toContain('hunter2');
  });
});
