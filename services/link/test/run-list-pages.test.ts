import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

/*
 * The run engine's lists (GET /onboardings, /offboardings, /moves: one implementation,
 * runs.repository.ts): exact totals by status after the API's writes (a create, a cancel), none
 * changed by a refused write, and `after` walking a list exactly once; and each item exactly what
 * GET /:id answers, tasks that ran included (a page and a single run are read by different
 * statements; link's tests run at UTC+14, jest.config.js, where a @db.Date read as a local
 * midnight would be the day before). The queue takes jobs but runs none, so no status changes
 * behind the test's back.
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
const post = (path: string, body?: object, auth = h.auth) =>
  request(h.link.app).post(`/api/v1${path}`).set('Authorization', auth).send(body);

async function created(path: string, body: object) {
  const response = await post(path, body);
  expect({ path, status: response.status, body: response.status === 201 ? null : response.body }).toEqual({
    path,
    status: 201,
    body: null,
  });
  return response.body as { id: string };
}

let dayOffset = 0;
/** A day far ahead, a new one each call: a move's open key is its user and date. */
const futureDay = () => new Date(Date.UTC(2031, 0, 1) + dayOffset++ * 86_400_000).toISOString().slice(0, 10);

const KINDS = {
  onboardings: () =>
    created('/onboardings', {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `ada.${hex()}@${h.managed.domain}`,
      department: 'Engineering',
      manager_id: managerId,
      start_date: futureDay(),
      bundles: ['office', 'engineering'],
      physical: { laptop: 'ThinkPad T14', badge: true, phone_extension: false },
    }),
  offboardings: async () => {
    const leaver = await h.deskTenant.createUser({ name: 'Lea Ver', email: `lea.${hex()}@${h.managed.domain}` });
    return created('/offboardings', {
      user_id: leaver.id,
      last_day: futureDay(),
      mailbox_retention_days: 30,
      successor_id: managerId,
    });
  },
  moves: () =>
    created('/moves', {
      user_id: managerId,
      effective_date: futureDay(),
      job_title: 'Head of Engineering',
      department: 'Platform',
      bundles: { add: ['engineering'], remove: [] },
      physical: { laptop: 'MacBook Pro 14', notes: 'Third floor.' },
    }),
} as const;
type Kind = keyof typeof KINDS;
const TASK_KEYS: Record<Kind, string> = {
  onboardings: 'onboarding_id',
  offboardings: 'offboarding_id',
  moves: 'move_id',
};

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
  h.link.db.listCount.findMany({
    where: { tenantId: h.deskTenant.tenantId },
    orderBy: [{ list: 'asc' }, { dimension: 'asc' }, { value: 'asc' }],
    select: { list: true, dimension: true, value: true, count: true },
  });

const links = (header: string | undefined) =>
  Object.fromEntries([...(header ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], m[1]]));

describe.each(Object.keys(KINDS) as Kind[])('GET /%s', (kind) => {
  test('When runs are created and one cancelled through the API, then the total is exact without a filter and for every status', async () => {
    const before = {
      all: await total(`/${kind}`),
      scheduled: await total(`/${kind}?status=scheduled`),
      cancelled: await total(`/${kind}?status=cancelled`),
    };
    const runs = [await KINDS[kind](), await KINDS[kind](), await KINDS[kind]()];
    if (kind !== 'onboardings') expect((await post(`/${kind}/${runs[1]!.id}/cancel`)).status).toBe(200);
    const cancelled = kind === 'onboardings' ? 0 : 1;

    expect(await total(`/${kind}`)).toBe(before.all + 3);
    expect(await total(`/${kind}?status=scheduled`)).toBe(before.scheduled + 3 - cancelled);
    expect(await total(`/${kind}?status=cancelled`)).toBe(before.cancelled + cancelled);
    for (const status of ['scheduled', 'in_progress', 'completed', 'completed_with_errors', 'failed', 'cancelled']) {
      expect({ status, total: await total(`/${kind}?status=${status}`) }).toEqual({
        status,
        total: await stored(kind, status),
      });
    }
    expect(await total(`/${kind}`)).toBe(await stored(kind));
  });

  test('When a run is refused (409 another open run of its key, 400 invalid body, 409 cancelling a cancelled run), then no counter changes', async () => {
    const run = await KINDS[kind]();
    const body = (
      await h.link.db.$queryRawUnsafe<Record<string, unknown>[]>(`SELECT * FROM ${kind} WHERE id = $1::uuid`, run.id)
    )[0]!;
    if (kind !== 'onboardings') expect((await post(`/${kind}/${run.id}/cancel`)).status).toBe(200);
    const before = await counters();

    if (kind === 'onboardings') {
      const again = await post('/onboardings', {
        first_name: 'Ada',
        last_name: 'Again',
        email: body['email'],
        department: 'Engineering',
        manager_id: managerId,
        start_date: futureDay(),
        bundles: [],
        physical: { laptop: 'ThinkPad T14', badge: false, phone_extension: false },
      });
      expect(again.status).toBe(409);
    } else {
      expect((await post(`/${kind}/${run.id}/cancel`)).status).toBe(409);
    }
    expect((await post(`/${kind}`, { nonsense: true })).status).toBe(400);

    expect(await counters()).toEqual(before);
  });

  test(
    'When a caller follows after, then every run comes exactly once, newest first, with and ' +
      'without a status; an unknown after and after with page 2 are 400',
    async () => {
      for (let i = 0; i < 3; i++) await KINDS[kind]();
      for (const path of [`/${kind}`, `/${kind}?status=scheduled`]) {
        const first = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=2`);
        const seen: string[] = first.body.data.map((run: { id: string }) => run.id);
        let url: string | undefined = `/api/v1${path}${path.includes('?') ? '&' : '?'}per_page=2&after=${seen[1]}`;
        while (url) {
          const page: request.Response = await request(h.link.app).get(url).set('Authorization', h.auth);
          expect(page.status).toBe(200);
          expect(page.body.pagination).toEqual({
            per_page: 2,
            total: first.body.pagination.total,
            total_pages: Math.ceil(first.body.pagination.total / 2),
          });
          seen.push(...page.body.data.map((run: { id: string }) => run.id));
          const next: string | undefined = links(page.headers['link']).next;
          url = next?.replace(/^https?:\/\/[^/]+/, '');
        }
        const expected = await h.link.db.$queryRawUnsafe<{ id: string }[]>(
          `SELECT id::text FROM ${kind} WHERE owner_tenant_id = $1::uuid
          ${path.includes('status') ? `AND status = 'scheduled'` : ''} ORDER BY created_at DESC, id DESC`,
          h.deskTenant.tenantId,
        );
        expect(seen).toEqual(expected.map((row) => row.id));
        expect(seen.length).toBe(first.body.pagination.total);
      }

      // Another owner's run (a copy of one of the caller's, under a new id and owner) is not an item of the caller's list.
      const mine = (await get(`/${kind}?per_page=1`)).body.data[0].id as string;
      const [theirs] = await h.link.db.$queryRawUnsafe<{ id: string }[]>(
        `INSERT INTO ${kind} SELECT (jsonb_populate_record(NULL::${kind}, to_jsonb(k) || jsonb_build_object('id',
        gen_random_uuid(), 'owner_tenant_id', $2::uuid))).*
         FROM ${kind} k WHERE id = $1::uuid RETURNING id::text`,
        mine,
        randomUUID(),
      );
      for (const query of [`after=${randomUUID()}`, `after=${theirs!.id}`, `page=2&after=${mine}`]) {
        const response = await get(`/${kind}?${query}`);
        expect({ query, status: response.status }).toEqual({ query, status: 400 });
        expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(['after']);
      }
    },
  );

  test('When runs are listed, one of them with tasks that ran, then each item is exactly what GET /:id answers for it, newest first', async () => {
    const taskKey = TASK_KEYS[kind];
    const ids = [(await KINDS[kind]()).id, (await KINDS[kind]()).id, (await KINDS[kind]()).id];
    // The middle run as if its first step had run and its second had failed after two tries.
    const [middle] = [ids[1]!];
    await h.link.db.$executeRawUnsafe(
      `UPDATE run_tasks SET status = 'succeeded', attempts = 1, detail = 'Done.',
        result = '{"ticket_id": "3f0c8c9e-4b7e-4a57-9d55-0c6f1c3b7a10", "ticket_number": 4711, "nested": {"a": [1, null]}}',
         started_at = '2032-01-01T08:00:00.123Z', finished_at = '2032-01-01T08:00:01.456Z'
       WHERE ${taskKey} = $1::uuid AND position = 0`,
      middle,
    );
    await h.link.db.$executeRawUnsafe(
      `UPDATE run_tasks SET status = 'failed', attempts = 2, detail = 'The directory refused: 409.',
        started_at = '2032-01-01T08:00:02Z', finished_at = '2032-01-01T08:00:03Z'
       WHERE ${taskKey} = $1::uuid AND position = 1`,
      middle,
    );
    await h.link.db.$executeRawUnsafe(
      `UPDATE ${kind} SET status = 'in_progress', started_at = '2032-01-01T08:00:00Z', directory_user_id = 'dir-${hex()}' WHERE id = $1::uuid`,
      middle,
    );

    const listed = await get(`/${kind}?per_page=3`);
    // (A page and GET /:id read the runs and their tasks through different statements.)
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((item: { id: string }) => item.id)).toEqual([...ids].reverse());
    for (const item of listed.body.data as { id: string; tasks: unknown[] }[]) {
      const one = await get(`/${kind}/${item.id}`);
      expect(one.status).toBe(200);
      expect(item).toEqual(one.body);
      expect(item.tasks.length).toBeGreaterThan(1);
    }
    const ran = (
      listed.body.data as { id: string; tasks: { status: string; result: unknown; started_at: string | null }[] }[]
    ).find((item) => item.id === middle)!;
    expect(ran.tasks[0]).toMatchObject({
      status: 'succeeded',
      result: { ticket_number: 4711, nested: { a: [1, null] } },
      started_at: '2032-01-01T08:00:00.123Z',
    });
    expect(ran.tasks[1]).toMatchObject({ status: 'failed', attempts: 2 });

    // A keyset page reads the same way.
    const after = await get(`/${kind}?per_page=1&after=${ids[2]}`);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual([listed.body.data[1]]);
  });
});
