import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createLogger } from '@msp/http';
import { createApiClientsRepository } from '../src/auth/api-clients.repository';
import { bootstrapClients } from '../src/auth/bootstrap';
import { startDesk, type TestDesk } from './support/desk';

const logger = createLogger({ service: 'desk', level: 'error' });
let desk: TestDesk;

beforeAll(async () => {
  desk = await startDesk();
});
afterAll(() => desk.close());

const tokenWith = (clientId: string, secret: string) =>
  request(desk.app)
    .post('/api/v1/auth/token')
    .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });

describe('bootstrap client', () => {
  test('When BOOTSTRAP_CLIENT_ID/SECRET are set, then that client exists with every scope, and a restart with a new secret updates it', async () => {
    const clients = createApiClientsRepository(desk.database.db);
    const settings = {
      NODE_ENV: 'production',
      BOOTSTRAP_CLIENT_ID: 'ops-automation',
      BOOTSTRAP_CLIENT_SECRET: 'first-secret-0123456789',
      BOOTSTRAP_TENANT: 'acme',
    };
    await bootstrapClients(settings, clients, logger);

    const first = await tokenWith('ops-automation', 'first-secret-0123456789');
    expect(first.status).toBe(200);
    expect(first.body.scope.split(' ')).toEqual(
      expect.arrayContaining(['admin:tenant', 'read:tickets', 'read:payroll']),
    );
    const tenant = await desk.db.tenant.findUniqueOrThrow({ where: { slug: 'acme' } });
    expect((await desk.db.apiClient.findUniqueOrThrow({ where: { clientId: 'ops-automation' } })).tenantId).toBe(
      tenant.id,
    );

    await bootstrapClients({ ...settings, BOOTSTRAP_CLIENT_SECRET: 'second-secret-0123456789' }, clients, logger);
    expect((await tokenWith('ops-automation', 'first-secret-0123456789')).status).toBe(401);
    expect((await tokenWith('ops-automation', 'second-secret-0123456789')).status).toBe(200);
    expect(await desk.db.apiClient.count({ where: { clientId: 'ops-automation' } })).toBe(1);
  });

  test('When no bootstrap variables are set outside production, then a development client is created once and written to DEV_CLIENT_FILE', async () => {
    const clients = createApiClientsRepository(desk.database.db);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'desk-dev-')), 'dev-client.json');
    const tenant = `dev-${Date.now()}`;
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await bootstrapClients(
        { NODE_ENV: 'development', BOOTSTRAP_TENANT: tenant, DEV_CLIENT_FILE: file },
        clients,
        logger,
      );
      await bootstrapClients(
        { NODE_ENV: 'development', BOOTSTRAP_TENANT: tenant, DEV_CLIENT_FILE: file },
        clients,
        logger,
      );
    } finally {
      stdout.mockRestore();
    }
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(saved).toEqual({ client_id: expect.stringMatching(/^dev-/), client_secret: expect.any(String), tenant });
    expect((await tokenWith(saved.client_id, saved.client_secret)).status).toBe(200);
    const tenantRow = await desk.db.tenant.findUniqueOrThrow({ where: { slug: tenant } });
    expect(await desk.db.apiClient.count({ where: { tenantId: tenantRow.id } })).toBe(1);
  });

  test('When no bootstrap variables are set in production, then no client is created', async () => {
    const before = await desk.db.apiClient.count();
    await bootstrapClients(
      { NODE_ENV: 'production', BOOTSTRAP_TENANT: 'prod-tenant' },
      createApiClientsRepository(desk.database.db),
      logger,
    );
    expect(await desk.db.apiClient.count()).toBe(before);
  });
});
