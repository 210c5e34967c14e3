import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

/*
 * Issue 25 point 1 for the run engine's lists (GET /onboardings, /offboardings, /moves: one
 * implementation, runs.repository.ts): exact totals by status after the API's writes (a create, a
 * cancel), none changed by a refused write, and `after` walking a list exactly once. The queue takes
 * jobs but runs none, so no status changes behind the test's back.
 */

let h: RunsHarness;
let managerId: string;

beforeAll(async () => {
  h = await startRunsHarness({ workers: false });
  managerId = (await h.deskTenant.createUser({ name: 'Mia Manager' })).id;
});
afterAll(() => h?.close());

const hex = () => randomBytes(4).toString('hex');
const get = (path: string, auth = h.auth) => request(h.link.app).get(`/api/v1${path}`).set('Authorization', auth);
const post = (path: string, body?: object, auth = h.auth) => request(h.link.app).post(`/api/v1${path}`).set('Authorization', auth).send(body);

async function created(path: string, body: object) {
  const response = await post(path, body);
  expect({ path, status: response.status, body: response.status === 201 ? null : response.body }).toEqual({ path, status: 201, body: null });
  return response.body as { id: string };
}

let dayOffset = 0;
/** A day far ahead, a new one each call: a move's open key is its user and date. */
const futureDay = () => new Date(Date.UTC(2031, 0, 1) + dayOffset++ * 86_400_000).toISOString().slice(0, 10);

const KINDS = {
  onboardings: () => created('/onboardings', {
    first_name: 'Ada', last_name: 'Lovelace', email: `ada.${hex()}@${h.managed.domain}`, department: 'Engineering', manager_id: managerId,
    start_date: futureDay(), bundles: [], physical: { laptop: 'ThinkPad T14', badge: false, phone_extension: false },
  }),
  offboardings: async () => {
    const leaver = await h.deskTenant.createUser({ name: 'Lea Ver', email: `lea.${hex()}@${h.managed.domain}` });
    return created('/offboardings', { user_id: leaver.id, last_day: futureDay(), mailbox_retention_days: 30, successor_id: managerId });
  },
  moves: () => created('/moves', { user_id: managerId, effective_date: futureDay(), job_title: 'Head of Engineering', bundles: { add: [], remove: [] } }),
} as const;
type Kind = keyof typeof KINDS;

async function total(path: string): Promise<number> {
  const response = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=1`);
  expect({ path, status: response.status }).toEqual({ path, status: 200 });
  return response.body.pagination.total;
}

async function stored(kind: Kind, status?: string): Promise<number> {
  const [row] = await h.link.db.$queryRawUnsafe<{ count: bigint }[]>(
    `SELECT count(*) FROM ${kind} WHERE owner_tenant_id = $1::uuid ${status ? 'AND status::text = $2' : ''}`,
    ...[h.deskTenant.tenantId, ...(status ? [status] : [])],
  );
  return Number(row!.count);
}

const counters = () =>
  h.link.db.listCount.findMany({ where: { tenantId: h.deskTenant.tenantId }, orderBy: [{ list: 'asc' }, { dimension: 'asc' }, { value: 'asc' }], select: { list: true, dimension: true, value: true, count: true } });

const links = (header: string | undefined) => Object.fromEntries([...(header ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], m[1]]));

describe.each(Object.keys(KINDS) as Kind[])('GET /%s', (kind) => {
  test('When runs are created and one cancelled through the API, then the total is exact without a filter and for every status', async () => {
    const before = { all: await total(`/${kind}`), scheduled: await total(`/${kind}?status=scheduled`), cancelled: await total(`/${kind}?status=cancelled`) };
    const runs = [await KINDS[kind](), await KINDS[kind](), await KINDS[kind]()];
    if (kind !== 'onboardings') expect((await post(`/${kind}/${runs[1]!.id}/cancel`)).status).toBe(200);
    const cancelled = kind === 'onboardings' ? 0 : 1;

    expect(await total(`/${kind}`)).toBe(before.all + 3);
    expect(await total(`/${kind}?status=scheduled`)).toBe(before.scheduled + 3 - cancelled);
    expect(await total(`/${kind}?status=cancelled`)).toBe(before.cancelled + cancelled);
    for (const status of ['scheduled', 'in_progress', 'completed', 'completed_with_errors', 'failed', 'cancelled']) {
      expect({ status, total: await total(`/${kind}?status=${status}`) }).toEqual({ status, total: await stored(kind, status) });
    }
    expect(await total(`/${kind}`)).toBe(await stored(kind));
  });

  test('When a run is refused (409 another open run of its key, 400 invalid body, 409 cancelling a cancelled run), then no counter changes', async () => {
    const run = await KINDS[kind]();
    const body = (await h.link.db.$queryRawUnsafe<Record<string, unknown>[]>(`SELECT * FROM ${kind} WHERE id = $1::uuid`, run.id))[0]!;
    if (kind !== 'onboardings') expect((await post(`/${kind}/${run.id}/cancel`)).status).toBe(200);
    const before = await counters();

    if (kind === 'onboardings') {
      const again = await post('/onboardings', {
        first_name: 'Ada', last_name: 'Again', email: body['email'], department: 'Engineering', manager_id: managerId,
        start_date: futureDay(), bundles: [], physical: { laptop: 'ThinkPad T14', badge: false, phone_extension: false },
      });
      expect(again.status).toBe(409);
    } else {
      expect((await post(`/${kind}/${run.id}/cancel`)).status).toBe(409);
    }
    expect((await post(`/${kind}`, { nonsense: true })).status).toBe(400);

    expect(await counters()).toEqual(before);
  });

  test('When a caller follows after, then every run comes exactly once, newest first, with and without a status; an unknown after and after with page 2 are 400', async () => {
    for (let i = 0; i < 3; i++) await KINDS[kind]();
    for (const path of [`/${kind}`, `/${kind}?status=scheduled`]) {
      const first = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=2`);
      const seen: string[] = first.body.data.map((run: { id: string }) => run.id);
      let url: string | undefined = `/api/v1${path}${path.includes('?') ? '&' : '?'}per_page=2&after=${seen[1]}`;
      while (url) {
        const page: request.Response = await request(h.link.app).get(url).set('Authorization', h.auth);
        expect(page.status).toBe(200);
        expect(page.body.pagination).toEqual({ per_page: 2, total: first.body.pagination.total, total_pages: Math.ceil(first.body.pagination.total / 2) });
        seen.push(...page.body.data.map((run: { id: string }) => run.id));
        const next: string | undefined = links(page.headers['link']).next;
        url = next?.replace(/^https?:\/\/[^/]+/, '');
      }
      const expected = await h.link.db.$queryRawUnsafe<{ id: string }[]>(
        `SELECT id::text FROM ${kind} WHERE owner_tenant_id = $1::uuid ${path.includes('status') ? `AND status = 'scheduled'` : ''} ORDER BY created_at DESC, id DESC`,
        h.deskTenant.tenantId,
      );
      expect(seen).toEqual(expected.map((row) => row.id));
      expect(seen.length).toBe(first.body.pagination.total);
    }

    // Another owner's run (a copy of one of the caller's, under a new id and owner) is not an item of the caller's list.
    const mine = (await get(`/${kind}?per_page=1`)).body.data[0].id as string;
    const [theirs] = await h.link.db.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO ${kind} SELECT (jsonb_populate_record(NULL::${kind}, to_jsonb(k) || jsonb_build_object('id', gen_random_uuid(), 'owner_tenant_id', $2::uuid))).*
         FROM ${kind} k WHERE id = $1::uuid RETURNING id::text`,
      mine,
      randomUUID(),
    );
    for (const query of [`after=${randomUUID()}`, `after=${theirs!.id}`, `page=2&after=${mine}`]) {
      const response = await get(`/${kind}?${query}`);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(['after']);
    }
  });
});
