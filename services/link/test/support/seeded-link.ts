import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { seedWebhook } from '@msp/testkit';
import { startRunsHarness, type RunsHarness, type RunsHarnessOptions } from './runs-harness';

/**
 * link for the suites that walk every route (tenant wall, fuzzer, conditional requests): the runs
 * harness (its queue, a real desk, a real SCIM directory) where the caller's tenant holds one of
 * everything — a managed tenant with a connector and a sync run, an onboarding, an offboarding, a
 * move, a webhook with a delivery.
 */
export async function startSeededLink(options: RunsHarnessOptions = {}): Promise<RunsHarness> {
  const h = await startRunsHarness(options);
  const post = async (path: string, body?: object) => {
    const response = await request(h.link.app).post(`/api/v1${path}`).set('Authorization', h.auth).send(body);
    if (response.status >= 300)
      throw new Error(`seeding POST ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as { id: string };
  };
  const connector = (await h.link.db.connector.findFirstOrThrow({ where: { managedTenantId: h.managed.id } })).id;
  await post(`/connectors/${connector}/sync`);
  const manager = await h.deskTenant.createUser({ name: 'Mia Manager' });
  const email = `ada.${randomBytes(4).toString('hex')}@${h.managed.domain}`;
  const physical = { laptop: 'ThinkPad T14 Gen 5', badge: true, phone_extension: false };
  await post('/onboardings', {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email,
    department: 'Engineering',
    manager_id: manager.id,
    start_date: '2030-12-01',
    bundles: [],
    physical,
  });
  const leaver = await h.deskTenant.createUser({
    name: 'Lea Ver',
    email: `lea.${randomBytes(4).toString('hex')}@${h.managed.domain}`,
  });
  await post('/offboardings', {
    user_id: leaver.id,
    last_day: '2030-12-31',
    mailbox_retention_days: 30,
    successor_id: manager.id,
  });
  await post('/moves', {
    user_id: manager.id,
    effective_date: '2030-12-01',
    job_title: 'Head of Engineering',
    bundles: { add: [], remove: [] },
  });
  await seedWebhook(h.link.app, h.auth);
  return h;
}
