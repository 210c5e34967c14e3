import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { adGroup, adUser, organizationalUnit, startSambaDc, startSlapd, type SambaDc, type Slapd } from '@msp/peers';
import { createSecretBox } from '@msp/secrets';
import { directoryOutboundFromConfig, loadLinkConfig } from '../src/config';
import { startLink, type TestLink } from './support/link';

const CONNECTORS = '/api/v1/connectors';

let dc: SambaDc;
let slapd: Slapd;
let link: TestLink;

beforeAll(async () => {
  [dc, slapd] = await Promise.all([startSambaDc({ usersOu: 'OU=Staff' }), startSlapd()]);
  await dc.addEntries([
    organizationalUnit(`OU=Groups,${dc.baseDn}`),
    adUser({
      cn: 'Ada Lovelace',
      parentDn: dc.usersOu!,
      sAMAccountName: 'ada.lovelace',
      mail: 'ada@corp.example',
      displayName: 'Ada Lovelace',
      givenName: 'Ada',
      sn: 'Lovelace',
      department: 'Research',
    }),
    adUser({
      cn: 'Charles Babbage',
      parentDn: dc.usersOu!,
      sAMAccountName: 'charles.babbage',
      mail: 'charles@corp.example',
      enabled: false,
    }),
    adGroup({ cn: 'VPN', parentDn: `OU=Groups,${dc.baseDn}`, members: [`CN=Ada Lovelace,${dc.usersOu!}`] }),
  ]);
  // The DC's private range through OUTBOUND_ALLOWED_NETWORKS, slapd through the loopback allowance:
  // link's own configuration code builds the policy.
  const config = loadLinkConfig({
    DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/link',
    OUTBOUND_ALLOWED_NETWORKS: dc.subnet,
    OUTBOUND_ALLOW_LOOPBACK: 'true',
    OUTBOUND_TIMEOUT_MS: '5000',
  });
  link = await startLink({ outbound: directoryOutboundFromConfig(config) });
}, 120_000);
afterAll(async () => {
  await link?.close();
  await Promise.all([dc?.stop(), slapd?.stop()]);
});

function caller() {
  return `Bearer ${link.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;
}

async function managedTenant(auth: string): Promise<string> {
  const response = await request(link.app)
    .post('/api/v1/tenants')
    .set('Authorization', auth)
    .send({ name: 'Corp', domain: `c${randomUUID().slice(0, 8)}.example.com`, client_id: randomUUID() });
  expect(response.status).toBe(201);
  return response.body.id as string;
}

function adConfig(overrides: Record<string, unknown> = {}) {
  return {
    flavor: 'active_directory',
    url: dc.url,
    bind_dn: dc.adminDn,
    bind_password: dc.adminPassword,
    base_dn: dc.baseDn,
    users_ou: dc.usersOu,
    groups_base: `OU=Groups,${dc.baseDn}`,
    ca_certificate: dc.caCertificatePem,
    bundle_groups: { vpn: `CN=VPN,OU=Groups,${dc.baseDn}` },
    upn_suffix: 'corp.example',
    ...overrides,
  };
}

function slapdConfig(overrides: Record<string, unknown> = {}) {
  return {
    flavor: 'openldap',
    url: slapd.ldapsUrl,
    bind_dn: slapd.adminDn,
    bind_password: slapd.adminPassword,
    base_dn: slapd.baseDn,
    users_ou: slapd.peopleOu,
    groups_base: slapd.groupsOu,
    ca_certificate: slapd.caCertificatePem,
    ...overrides,
  };
}

async function createConnector(auth: string, config: Record<string, unknown>) {
  const tenantId = await managedTenant(auth);
  return request(link.app)
    .post(CONNECTORS)
    .set('Authorization', auth)
    .send({ tenant_id: tenantId, type: 'ldap', name: 'Corp AD', config });
}

async function health(auth: string, id: string) {
  const response = await request(link.app).get(`${CONNECTORS}/${id}/health`).set('Authorization', auth);
  expect(response.status).toBe(200);
  return response.body as { status: string; reason?: string };
}

describe('ldap connectors: create, read, change', () => {
  test(
    'When an Active Directory connector is created, then it answers 201 with its config, ' +
      'bind_password_set and never the password; the password is stored encrypted',
    async () => {
      const auth = caller();
      const response = await createConnector(auth, adConfig());

      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        type: 'ldap',
        config: {
          flavor: 'active_directory',
          url: dc.url,
          start_tls: false,
          bind_dn: dc.adminDn,
          bind_password_set: true,
          base_dn: dc.baseDn,
          users_ou: dc.usersOu,
          disabled_ou: null,
          groups_base: `OU=Groups,${dc.baseDn}`,
          bundle_groups: { vpn: `CN=VPN,OU=Groups,${dc.baseDn}` },
          upn_suffix: 'corp.example',
          department_ous: {},
        },
      });
      expect(JSON.stringify(response.body)).not.toContain(dc.adminPassword);
      const stored = await link.db.connector.findUniqueOrThrow({ where: { id: response.body.id } });
      expect(stored.bearerTokenEncrypted).toMatch(/^v1\./);
      expect(stored.bearerTokenEncrypted).not.toContain(dc.adminPassword);
      expect(JSON.stringify(stored.settings)).not.toContain(dc.adminPassword);

      const read = await request(link.app).get(`${CONNECTORS}/${response.body.id}`).set('Authorization', auth);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(response.body);
    },
  );

  test('When an Active Directory connector has a plain ldap:// URL without start_tls, then it is 422 insecure_transport and nothing is stored', async () => {
    const auth = caller();
    const response = await createConnector(auth, adConfig({ url: dc.startTlsUrl }));

    expect(response.status).toBe(422);
    expect(response.body.type).toBe('urn:msp:problem:insecure_transport');
    expect(response.body.detail).toMatch(/start_tls/);
    const listed = await request(link.app).get(`${CONNECTORS}?include_disabled=true`).set('Authorization', auth);
    expect(listed.body.data).toEqual([]);
  });

  test(
    'When the URL is ldap:// with start_tls: true, then it is accepted; a plain ldap:// ' +
      'to slapd on loopback is accepted because loopback is allowed',
    async () => {
      const auth = caller();
      expect((await createConnector(auth, adConfig({ url: dc.startTlsUrl, start_tls: true }))).status).toBe(201);
      expect((await createConnector(auth, slapdConfig({ url: slapd.url }))).status).toBe(201);
    },
  );

  test('When the server is on a private address outside OUTBOUND_ALLOWED_NETWORKS, then the connector is refused with 422 naming the address', async () => {
    const auth = caller();
    const response = await createConnector(auth, adConfig({ url: 'ldaps://10.99.0.5' }));
    expect(response.status).toBe(422);
    expect(response.body.detail).toMatch(/10\.99\.0\.5.*private/);
  });

  test('When a config misses bind_dn, or carries a SCIM member, or a scim connector gets an ldap config, then it is 400 and nothing is stored', async () => {
    const auth = caller();
    const withoutBindDn: Record<string, unknown> = adConfig();
    delete withoutBindDn.bind_dn;
    const missing = await createConnector(auth, withoutBindDn);
    expect(missing.status).toBe(400);
    const mixed = await createConnector(auth, { ...adConfig(), base_url: 'https://scim.example.com' });
    expect(mixed.status).toBe(400);
    const tenantId = await managedTenant(auth);
    const crossed = await request(link.app)
      .post(CONNECTORS)
      .set('Authorization', auth)
      .send({ tenant_id: tenantId, type: 'scim', name: 'x', config: adConfig() });
    expect(crossed.status).toBe(400);
    expect(crossed.body.errors).toEqual(
      expect.arrayContaining([{ field: 'config.base_url', message: 'is required for scim connectors' }]),
    );
    const listed = await request(link.app).get(`${CONNECTORS}?include_disabled=true`).set('Authorization', auth);
    expect(listed.body.data).toEqual([]);
  });

  test(
    'When an ldap connector is patched with a new bind_password and disabled_ou, then the rest is ' +
      'kept, the password is still never returned, and a scim member is 400',
    async () => {
      const auth = caller();
      const created = await createConnector(auth, adConfig());
      const id = created.body.id as string;

      const patched = await request(link.app)
        .patch(`${CONNECTORS}/${id}`)
        .set('Authorization', auth)
        .send({ config: { bind_password: 'another-Secret-1', disabled_ou: `OU=Disabled,${dc.baseDn}` } });
      expect(patched.status).toBe(200);
      expect(patched.body.config).toEqual({ ...created.body.config, disabled_ou: `OU=Disabled,${dc.baseDn}` });
      expect(JSON.stringify(patched.body)).not.toContain('another-Secret-1');

      const wrong = await request(link.app)
        .patch(`${CONNECTORS}/${id}`)
        .set('Authorization', auth)
        .send({ config: { bearer_token: 'x' } });
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors).toEqual([
        { field: 'config.bearer_token', message: 'is not a setting of ldap connectors' },
      ]);
    },
  );
});

describe('ldap connectors: health', () => {
  test('When the Active Directory connector can bind and read its base, then its health is healthy without any sync run', async () => {
    const auth = caller();
    const created = await createConnector(auth, adConfig());
    expect(await health(auth, created.body.id)).toMatchObject({ status: 'healthy', last_run: null });
  });

  test('When the OpenLDAP connector can bind over StartTLS and read its base, then its health is healthy', async () => {
    const auth = caller();
    const created = await createConnector(auth, slapdConfig({ url: slapd.url, start_tls: true }));
    expect(created.status).toBe(201);
    expect(await health(auth, created.body.id)).toMatchObject({ status: 'healthy' });
  });

  test('When the bind password is wrong, then the health is failing at once with a reason naming the refused bind and bind_password', async () => {
    const auth = caller();
    const created = await createConnector(auth, adConfig({ bind_password: 'not-the-password' }));
    const body = await health(auth, created.body.id);
    expect(body.status).toBe('failing');
    expect(body.reason).toMatch(/invalid credentials.*config\.bind_password/);
    expect(body.reason).not.toContain('not-the-password');
  });

  test('When the bind password was sealed under another key, then the health is failing and says to set bind_password again', async () => {
    const auth = caller();
    const created = await createConnector(auth, adConfig());
    const otherKey = createSecretBox(randomBytes(32));
    await link.db.connector.update({
      where: { id: created.body.id },
      data: { bearerTokenEncrypted: otherKey.seal(dc.adminPassword) },
    });
    expect(await health(auth, created.body.id)).toMatchObject({
      status: 'failing',
      reason:
        "the connector's bind password cannot be decrypted (was CONNECTOR_ENCRYPTION_KEY changed?); " +
        'set it again with PATCH config.bind_password',
    });
  });

  test('When the certificate was issued by a CA the connector does not trust, then the health is failing and says to set ca_certificate', async () => {
    const auth = caller();
    const created = await createConnector(auth, adConfig({ ca_certificate: undefined }));
    const body = await health(auth, created.body.id);
    expect(body.status).toBe('failing');
    expect(body.reason).toMatch(/certificate.*ca_certificate/);
  });

  test('When the server is down, then the health is failing with a reason saying it could not be reached', async () => {
    const auth = caller();
    const created = await createConnector(auth, slapdConfig());
    expect((await health(auth, created.body.id)).status).toBe('healthy');
    await slapd.setDown(true);
    try {
      const body = await health(auth, created.body.id);
      expect(body.status).toBe('failing');
      expect(body.reason).toMatch(/could not be reached.*ECONNREFUSED/);
    } finally {
      await slapd.setDown(false);
    }
  });

  test("When the domain controller's certificate has expired, then the health is failing and says to renew it", async () => {
    const auth = caller();
    const created = await createConnector(auth, adConfig());
    await dc.setCertificate('expired');
    try {
      const body = await health(auth, created.body.id);
      expect(body.status).toBe('failing');
      expect(body.reason).toMatch(/certificate .* has expired: renew/);
    } finally {
      await dc.setCertificate('valid');
    }
    expect((await health(auth, created.body.id)).status).toBe('healthy');
  }, 60_000);
});
