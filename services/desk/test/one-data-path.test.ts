import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@msp/db';
import { createDb, MIGRATIONS_DIR, type DeskDatabase } from '../src/db';
import { deskEvents } from '../src/events/desk-events';
import { createStore, type Store } from '../src/store';

// Every query of desk goes through Kysely on one pool: the same row, and so the same answer,
// inside a transaction and outside one.
let database: TestDatabase;
let db: DeskDatabase;
let store: Store;
const tenantId = randomUUID();

beforeAll(async () => {
  database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
  db = createDb(database.url);
  store = createStore(db);
}, 120_000);
afterAll(async () => {
  await db.close();
  await database.drop();
});

describe('one data path', () => {
  test('When a repository runs a query, then it uses the one pg pool of the service', async () => {
    await store.clients.exists(tenantId, randomUUID());
    expect(db.pool.totalCount).toBeGreaterThan(0);
    expect(db.pool.totalCount).toBeLessThanOrEqual(db.pool.options.max ?? 10);
  });

  test('When a transaction creates a ticket, then its own read sees it and a read outside sees it only after the commit', async () => {
    await db.db
      .insertInto('tenants')
      .values({ id: tenantId, slug: `one-path-${tenantId}`, name: 'One path' })
      .execute();
    const client = await db.db
      .insertInto('clients')
      .values({ tenant_id: tenantId, name: 'Acme' })
      .returning('id')
      .executeTakeFirstOrThrow();
    let seenInside: unknown;
    let seenOutside: unknown = 'not read';
    const ticket = await store.transaction(async (tx) => {
      const created = await tx.tickets.create(
        tenantId,
        { title: 'Printer', clientId: client.id },
        deskEvents.head({ type: 'ticket.created', resourceType: 'ticket' }),
      );
      if (!created) throw new Error("the client is the tenant's: the ticket must be created");
      seenInside = await tx.tickets.findById(tenantId, created.id);
      seenOutside = await store.tickets.findById(tenantId, created.id);
      return created;
    });
    expect(seenInside).toEqual(ticket);
    expect(seenOutside).toBeNull();
    expect(await store.tickets.findById(tenantId, ticket.id)).toEqual(ticket);
    expect(await store.tickets.list(tenantId, {}, { page: 1, per_page: 25 })).toEqual({ items: [ticket], total: 1 });
    expect(await store.tickets.list(tenantId, {}, { page: 2, per_page: 25 })).toEqual({ items: [], total: 1 });
    expect(
      await store.tickets.list(tenantId, { status: 'open', priority: ticket.priority }, { page: 1, per_page: 25 }),
    ).toEqual({ items: [ticket], total: 1 });
  });

  test('When the database is closed, then its pool is ended with it', async () => {
    const other = createDb(database.url);
    await createStore(other).clients.exists(tenantId, randomUUID());
    await other.close();
    expect(other.pool.ended).toBe(true);
  });
});
