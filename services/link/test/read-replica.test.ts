import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { createStandInReplica, READ_REPLICA_ROLE, type StandInReplica } from '@msp/testkit';
import { MIGRATIONS_DIR } from '../src/db';
import { startLink, type TestLink } from './support/link';

/*
 * DATABASE_READ_URL: the lists (with their totals) read the replica; a write, its answer and a
 * single resource read the primary. The replica here never receives the primary's writes
 * (createStandInReplica) and refuses writes of its own, so what a read shows tells where it went.
 */

const TENANTS = '/api/v1/tenants';

let replica: StandInReplica;
let link: TestLink;

beforeAll(async () => {
  replica = await createStandInReplica(MIGRATIONS_DIR);
  link = await startLink({ readUrl: replica.url });
});
afterAll(async () => {
  await link?.close();
  await replica?.drop();
});

function newCaller() {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${link.token({ tenant_id: tenantId, scope: 'admin:tenant' })}` };
}

test(
  'When a managed tenant is registered, then the POST answers the stored row, GET by id ' +
    'finds it, and the list read on the replica does not show it yet',
  async () => {
    const caller = newCaller();
    const domain = `c${randomBytes(5).toString('hex')}.onmicrosoft.com`;

    const created = await request(link.app)
      .post(TENANTS)
      .set('Authorization', caller.auth)
      .send({ name: 'Contoso Microsoft 365', domain, client_id: randomUUID() });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Contoso Microsoft 365', domain, status: 'active' });
    const single = await request(link.app).get(`${TENANTS}/${created.body.id}`).set('Authorization', caller.auth);
    expect(single.status).toBe(200);
    expect(single.body.id).toBe(created.body.id);
    for (const path of [TENANTS, `${TENANTS}?status=active`]) {
      const list = await request(link.app).get(path).set('Authorization', caller.auth);
      expect({ path, status: list.status, data: list.body.data, total: list.body.pagination?.total }).toEqual({
        path,
        status: 200,
        data: [],
        total: 0,
      });
    }
    expect(await link.db.managedTenant.count({ where: { ownerTenantId: caller.tenantId } })).toBe(1);
  },
);

test(
  'When link runs with a replica, then its reads are connected there as the ' +
    'read-only role, and /readyz reports the replica beside the database',
  async () => {
    const caller = newCaller();
    expect((await request(link.app).get(TENANTS).set('Authorization', caller.auth)).status).toBe(200);

    const [row] = await link.db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND usename = $2 AND application_name = 'link-reads'`,
      replica.name,
      READ_REPLICA_ROLE,
    );
    expect(Number(row!.n)).toBeGreaterThan(0);
    const ready = await request(link.app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: 'ok', database_reads: 'ok' } });
  },
);
