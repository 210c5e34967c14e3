import { sql, type Generated } from 'kysely';
import { inListOrder, listPage, openDatabase, streamQueryRows, unlessDuplicate, type Database } from '../src';
import { emptyDatabase } from './fixture';

interface Tables {
  notes: { id: Generated<number>; day: string; big: number; title: string; created_at: Generated<Date> };
}

let empty: Awaited<ReturnType<typeof emptyDatabase>>;
let database: Database<Tables>;
let db: Database<Tables>['db'];

beforeAll(async () => {
  empty = await emptyDatabase('kysely');
  database = openDatabase<Tables>(empty.url, { max: 3, acquireTimeoutMs: 500 });
  db = database.db;
  await sql`CREATE TABLE notes (id serial PRIMARY KEY, day date NOT NULL, big int8 NOT NULL, title text NOT NULL UNIQUE,
    created_at timestamptz(3) NOT NULL DEFAULT now())`.execute(db);
  await db
    .insertInto('notes')
    .values(
      Array.from({ length: 30 }, (_, n) => ({
        day: `2026-03-${String((n % 28) + 1).padStart(2, '0')}`,
        big: 2 ** 40 + n,
        title: `note ${n}`,
      })),
    )
    .execute();
});
afterAll(async () => {
  await database.close();
  await empty.drop();
});

test('When rows are read, then a date is its text, an int8 a number and a timestamptz a Date, in and out of a transaction', async () => {
  const outside = await db.selectFrom('notes').selectAll().where('title', '=', 'note 3').executeTakeFirstOrThrow();
  const inside = await db
    .transaction()
    .execute((trx) => trx.selectFrom('notes').selectAll().where('title', '=', 'note 3').executeTakeFirstOrThrow());
  expect(outside).toEqual(inside);
  expect(outside.day).toBe('2026-03-04');
  expect(outside.big).toBe(2 ** 40 + 3);
  expect(outside.created_at).toBeInstanceOf(Date);
});

test('When a write runs into a unique constraint, then unlessDuplicate throws what the caller made of it, naming the constraint', async () => {
  const write = db.insertInto('notes').values({ day: '2026-01-01', big: 1, title: 'note 1' }).execute();
  await expect(unlessDuplicate(write, (constraint) => new Error(`taken: ${constraint}`))).rejects.toThrow(
    'taken: notes_title_key',
  );
});

test('When a list is paged by keyset, then the pages follow one another without gaps and an unknown after is refused', async () => {
  const order = { columns: ['big', 'id'], direction: 'desc' } as const;
  const pageAfter = (after?: string) =>
    listPage({
      window: { skip: 0, take: 7, ...(after === undefined ? {} : { after }) },
      afterKey: async (id) => {
        const row = await db.selectFrom('notes').select(['big', 'id']).where('id', '=', Number(id)).executeTakeFirst();
        return row && [row.big, row.id];
      },
      page: (key) =>
        inListOrder(db.selectFrom('notes').select(['id', 'title']), order, { skip: 0, take: 7 }, key).execute(),
      total: async () =>
        Number(
          (
            await db
              .selectFrom('notes')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
      unknownAfter: () => new Error('unknown after'),
    });
  const seen: string[] = [];
  let page = await pageAfter();
  while (page.items.length > 0) {
    seen.push(...page.items.map((item) => item.title));
    page = await pageAfter(String(page.items[page.items.length - 1]!.id));
  }
  expect(page.total).toBe(30);
  expect(seen).toEqual(Array.from({ length: 30 }, (_, n) => `note ${29 - n}`));
  await expect(pageAfter('999999')).rejects.toThrow('unknown after');
});

describe('streamQueryRows', () => {
  const idle = () => database.pool.totalCount - database.pool.idleCount;

  test('When a stream is read to its end, then every row came and its connection is back', async () => {
    const rows = await streamQueryRows(db.selectFrom('notes').select('title').orderBy('id'), { chunkSize: 4 });
    const titles: string[] = [];
    for await (const row of rows) titles.push((row as { title: string }).title);
    expect(titles).toHaveLength(30);
    expect(idle()).toBe(0);
  });

  test('When a stream is destroyed after its first row, then its cursor is closed and its connection is back', async () => {
    const rows = await streamQueryRows(db.selectFrom('notes').select('title'), { chunkSize: 4 });
    for await (const row of rows) {
      expect(row).toHaveProperty('title');
      break;
    }
    // The cursor closes asynchronously after the loop ended; its connection is back once it has.
    for (let waited = 0; idle() > 0 && waited < 5000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(idle()).toBe(0);
    // Every connection of the pool can still be taken.
    await Promise.all([1, 2, 3].map(() => sql`SELECT pg_sleep(0.05)`.execute(db)));
  });

  test('When the query fails, then the stream is refused before a row and its connection is back', async () => {
    await expect(streamQueryRows(db.selectFrom('notes').select(sql<number>`1 / (id - id)`.as('x')))).rejects.toThrow(
      'division by zero',
    );
    expect(idle()).toBe(0);
  });
});

describe('openDatabase readUrl', () => {
  test(
    'When a readUrl is given, then reads runs on that database as <name>-reads with the ' +
      'same parsers, db stays on the primary, and close ends both pools',
    async () => {
      const replica = await emptyDatabase('kysely_reads');
      const both = openDatabase<Tables>(empty.url, { applicationName: 'probe', readUrl: replica.url });
      try {
        const on = async (client: Database<Tables>['db']) =>
          (
            await sql<{
              db: string;
              app: string;
              big: number;
            }>`SELECT current_database() AS db, current_setting('application_name') AS app, (2^40)::int8 AS big`.execute(
              client,
            )
          ).rows[0]!;
        expect(await on(both.reads)).toEqual({ db: replica.name, app: 'probe-reads', big: 2 ** 40 });
        expect(await on(both.db)).toEqual({ db: empty.name, app: 'probe', big: 2 ** 40 });
        expect(both.readPool).not.toBe(both.pool);
      } finally {
        await both.close();
      }
      expect([both.pool.ended, both.readPool.ended]).toEqual([true, true]);
      await replica.drop();
    },
  );

  test('When the replica cannot be reached, then reads answer from the primary, and from the replica again once it is back', async () => {
    const net = await import('node:net');
    // The replica's port as HAProxy's: with no healthy server behind it, it accepts and at once closes.
    let replicaUp = false;
    const balancer = net.createServer((socket) => {
      if (!replicaUp) return socket.destroy();
      const server = net.connect(
        new URL(empty.url).port ? Number(new URL(empty.url).port) : 5432,
        new URL(empty.url).hostname,
      );
      socket.pipe(server).pipe(socket);
      socket.on('error', () => server.destroy());
      server.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve));
    const readUrl = new URL(empty.url);
    readUrl.hostname = '127.0.0.1';
    readUrl.port = String((balancer.address() as { port: number }).port);
    const both = openDatabase<Tables>(empty.url, {
      applicationName: 'probe',
      readUrl: readUrl.toString(),
      acquireTimeoutMs: 2000,
    });
    try {
      const where = async () =>
        (await sql<{ app: string }>`SELECT current_setting('application_name') AS app`.execute(both.reads)).rows[0]!
          .app;
      expect(await where()).toBe('probe');
      const rows = await both.reads.selectFrom('notes').select('title').where('title', '=', 'note 3').execute();
      expect(rows).toEqual([{ title: 'note 3' }]);
      await expect(both.readPool.query('SELECT 1')).rejects.toThrow();
      replicaUp = true;
      expect(await where()).toBe('probe-reads');
      await expect(both.readPool.query('SELECT 1')).resolves.toBeDefined();
    } finally {
      replicaUp = false;
      balancer.close();
      await both.close();
    }
  });

  test('When no readUrl is given, then reads is db over the one pool', () => {
    expect(database.reads).toBe(database.db);
    expect(database.readPool).toBe(database.pool);
  });
});
