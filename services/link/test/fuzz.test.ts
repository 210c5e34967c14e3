import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { describeFuzz } from '@msp/testkit';
import { startRunsHarness } from './support/runs-harness';

describeFuzz({
  service: 'link',
  async setup() {
    // link with its queue, a real desk and a real SCIM directory; a limit high enough that the
    // fuzzer measures the routes, not the rate limiter. The tenant has a managed tenant with a
    // connector, a sync run, an onboarding and an offboarding.
    const h = await startRunsHarness({ rateLimitPerMinute: 10_000_000 });
    const post = (path: string, body?: object) => request(h.link.app).post(`/api/v1${path}`).set('Authorization', h.auth).send(body);
    const connector = (await h.link.db.connector.findFirstOrThrow({ where: { managedTenantId: h.managed.id } })).id;
    expect((await post(`/connectors/${connector}/sync`)).status).toBe(202);
    const manager = await h.deskTenant.createUser({ name: 'Mia Manager' });
    const email = `ada.${randomBytes(4).toString('hex')}@${h.managed.domain}`;
    const physical = { laptop: 'ThinkPad T14 Gen 5', badge: true, phone_extension: false };
    expect((await post('/onboardings', { first_name: 'Ada', last_name: 'Lovelace', email, department: 'Engineering', manager_id: manager.id, start_date: '2030-12-01', bundles: [], physical })).status).toBe(201);
    const leaver = await h.deskTenant.createUser({ name: 'Lea Ver', email: `lea.${randomBytes(4).toString('hex')}@${h.managed.domain}` });
    expect((await post('/offboardings', { user_id: leaver.id, last_day: '2030-12-31', mailbox_retention_days: 30, successor_id: manager.id })).status).toBe(201);
    return { app: h.link.app, auth: h.auth, databaseUrl: h.link.databaseUrl, close: () => h.close() };
  },
});
