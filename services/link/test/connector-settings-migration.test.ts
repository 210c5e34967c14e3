import { randomBytes, randomUUID } from 'node:crypto';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { applyMigrations, createTestDatabase, type TestDatabase } from '@msp/db';
import { createSecretBox } from '@msp/secrets';
import { MIGRATIONS_DIR } from '../src/db';
import { startLink, type TestLink } from './support/link';

const CONNECTORS = '/api/v1/connectors';
const SETTINGS_MIGRATION = '20261129130000_connector_settings';
const KEY = randomBytes(32);

/** A copy of the migrations folder without the settings migration and those after it. */
async function migrationsBefore(name: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'link-migrations-'));
  for (const entry of await readdir(MIGRATIONS_DIR)) {
    if (/^\d{14}_/.test(entry) && entry >= name) continue;
    await cp(path.join(MIGRATIONS_DIR, entry), path.join(dir, entry), { recursive: true });
  }
  return dir;
}

async function sql(url: string, text: string, values: unknown[]) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

// An ldap connector as the release before stored it: its settings in ldap_config.
const LDAP_CONFIG = {
  flavor: 'openldap',
  startTls: true,
  bindDn: 'cn=link,dc=corp,dc=example',
  baseDn: 'dc=corp,dc=example',
  usersOu: 'ou=people,dc=corp,dc=example',
  disabledOu: null,
  groupsBase: 'ou=groups,dc=corp,dc=example',
  caCertificate: null,
  bundleGroups: { vpn: 'cn=vpn,ou=groups,dc=corp,dc=example' },
  upnSuffix: null,
  departmentOus: { Finance: 'ou=finance,dc=corp,dc=example' },
};

let database: TestDatabase;
let before: string;
let link: TestLink;
const ownerTenantId = randomUUID();
const ids = { ldap: '', scim: '' };

beforeAll(async () => {
  before = await migrationsBefore(SETTINGS_MIGRATION);
  database = await createTestDatabase({ migrationsDir: before, label: 'link_settings' });
  const secrets = createSecretBox(KEY);
  const tenant = await sql(
    database.url,
    `INSERT INTO managed_tenants (owner_tenant_id, name, domain, client_id) VALUES ($1, 'Corp', 'corp.example', $2) RETURNING id`,
    [ownerTenantId, randomUUID()],
  );
  const insert = (type: string, baseUrl: string, ldapConfig: string | null) =>
    sql(
      database.url,
      `INSERT INTO connectors (owner_tenant_id, managed_tenant_id, type, name, base_url, bearer_token_encrypted, ldap_config)
       VALUES ($1, $2, $3::connector_type, $4, $5, $6, $7) RETURNING id`,
      [ownerTenantId, tenant.rows[0].id, type, `Corp ${type}`, baseUrl, secrets.seal('a secret'), ldapConfig],
    );
  ids.ldap = (await insert('ldap', 'ldap://dc1.corp.example', JSON.stringify(LDAP_CONFIG))).rows[0].id;
  ids.scim = (await insert('scim', 'https://scim.corp.example/scim/v2', null)).rows[0].id;

  expect(await applyMigrations(database.url, MIGRATIONS_DIR)).toEqual({ applied: [SETTINGS_MIGRATION] });
  link = await startLink({ databaseUrl: database.url, encryptionKey: KEY, workers: false });
});
afterAll(async () => {
  await link?.close();
  await database?.drop();
  await rm(before, { recursive: true, force: true });
});

const auth = () => `Bearer ${link.token({ tenant_id: ownerTenantId, scope: 'admin:tenant' })}`;

describe('connectors stored before their settings had a type-neutral column', () => {
  test('When the migration renames ldap_config to settings, then an ldap connector answers with the config it had', async () => {
    const response = await request(link.app).get(`${CONNECTORS}/${ids.ldap}`).set('Authorization', auth());

    expect(response.status).toBe(200);
    expect(response.body.config).toEqual({
      flavor: 'openldap',
      url: 'ldap://dc1.corp.example',
      start_tls: true,
      bind_dn: 'cn=link,dc=corp,dc=example',
      bind_password_set: true,
      base_dn: 'dc=corp,dc=example',
      users_ou: 'ou=people,dc=corp,dc=example',
      disabled_ou: null,
      groups_base: 'ou=groups,dc=corp,dc=example',
      ca_certificate: null,
      bundle_groups: { vpn: 'cn=vpn,ou=groups,dc=corp,dc=example' },
      upn_suffix: null,
      department_ous: { Finance: 'ou=finance,dc=corp,dc=example' },
    });
  });

  test('When a migrated ldap connector is patched, then the members not given keep their stored values', async () => {
    const response = await request(link.app)
      .patch(`${CONNECTORS}/${ids.ldap}`)
      .set('Authorization', auth())
      .send({ config: { users_ou: 'ou=staff,dc=corp,dc=example' } });

    expect(response.status).toBe(200);
    expect(response.body.config).toMatchObject({
      users_ou: 'ou=staff,dc=corp,dc=example',
      bind_dn: LDAP_CONFIG.bindDn,
    });
    const stored = await link.db.connector.findUniqueOrThrow({ where: { id: ids.ldap } });
    expect(stored.settings).toEqual({ ...LDAP_CONFIG, usersOu: 'ou=staff,dc=corp,dc=example' });
  });

  test('When a scim connector had no ldap_config, then its settings stay null and it answers as before', async () => {
    const response = await request(link.app).get(`${CONNECTORS}/${ids.scim}`).set('Authorization', auth());

    expect(response.status).toBe(200);
    expect(response.body.config).toEqual({ base_url: 'https://scim.corp.example/scim/v2', bearer_token_set: true });
    const stored = await link.db.connector.findUniqueOrThrow({ where: { id: ids.scim } });
    expect(stored.settings).toBeNull();
  });
});
