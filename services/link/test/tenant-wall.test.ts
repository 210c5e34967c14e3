import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { describeTenantWall } from '@msp/testkit';
import { startRunsHarness } from './support/runs-harness';

describeTenantWall({
  service: 'link',
  async setup() {
    // A real desk and SCIM directory: tenant A gets a managed tenant with a connector, a sync run,
    // an onboarding and an offboarding; tenant B (another desk tenant) a managed tenant of its own.
    const h = await startRunsHarness();
    const post = async (path: string, body: object, auth = h.auth) =>
      (await request(h.link.app).post(`/api/v1${path}`).set('Authorization', auth).send(body)).body as { id: string };
    const connector = (await h.link.db.connector.findFirstOrThrow({ where: { managedTenantId: h.managed.id } })).id;
    const sync = await request(h.link.app).post(`/api/v1/connectors/${connector}/sync`).set('Authorization', h.auth);
    if (sync.status !== 202) throw new Error(`sync: ${sync.status} ${JSON.stringify(sync.body)}`);
    const manager = await h.deskTenant.createUser({ name: 'Mia Manager' });
    const onboarding = await post('/onboardings', {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `ada.${randomBytes(4).toString('hex')}@${h.managed.domain}`,
      department: 'Engineering',
      manager_id: manager.id,
      start_date: '2030-12-01',
      bundles: [],
      physical: { laptop: 'ThinkPad T14 Gen 5', badge: true, phone_extension: false },
    });
    if (!onboarding.id) throw new Error(`onboarding: ${JSON.stringify(onboarding)}`);
    const leaver = await h.deskTenant.createUser({ name: 'Lea Ver', email: `lea.${randomBytes(4).toString('hex')}@${h.managed.domain}` });
    const offboarding = await post('/offboardings', { user_id: leaver.id, last_day: '2030-12-31', mailbox_retention_days: 30, successor_id: manager.id });
    if (!offboarding.id) throw new Error(`offboarding: ${JSON.stringify(offboarding)}`);

    const other = await h.desk.newTenant();
    const otherAuth = `Bearer ${h.link.token({ tenant_id: other.tenantId })}`;
    const otherClient = await other.createClient();
    await post('/tenants', { name: 'Fabrikam M365', domain: `f${randomBytes(4).toString('hex')}.example.com`, client_id: otherClient.id }, otherAuth);
    return { app: h.link.app, ownerAuth: h.auth, otherAuth, close: () => h.close() };
  },
});
