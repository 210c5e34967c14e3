import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@msp/db';
import { createDb, MIGRATIONS_DIR, type Db } from '../src/db';
import { deskEvents } from '../src/events/desk-events';
import { createStore, type Store } from '../src/store';

// The hottest reads (one ticket, a page of tickets) run as plain SQL on the pool under Prisma's
// adapter outside a transaction, and through the transaction's own client inside one.
let database: TestDatabase;
let db: Db;
let store: Store;
const tenantId = randomUUID();

beforeAll(async () => {
  database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
  db = createDb(database.url);
  store = createStore(db);
}, 120_000);
afterAll(async () => {
  await db.$disconnect();
  await database.drop();
});

describe('plain SQL reads beside Prisma', () => {
  test('When Prisma runs a query, then it uses the same pg pool the plain reads use (one pool per service)', async () => {
    await db.client.count();
    expect(db.pool.totalCount).toBeGreaterThan(0);
    expect(db.pool.totalCount).toBeLessThanOrEqual(db.pool.options.max ?? 10);
  });

  test('When a transaction creates a ticket, then its own read sees it and a read outside sees it only after the commit', async () => {
    await db.tenant.create({ data: { id: tenantId, slug: `sql-reads-${tenantId}`, name: 'SQL reads' } });
    const client = await db.client.create({ data: { tenantId, name: 'Acme' } });
    let seenInside: unknown;
    let seenOutside: unknown = 'not read';
    const ticket = await store.transaction(async (tx) => {
      const created = await tx.tickets.create(tenantId, { title: 'Printer', clientId: client.id }, deskEvents.head({ type: 'ticket.created', resourceType: 'ticket' }));
      if (!created) throw new Error('the client is the tenant\'s: the ticket must be created');
      seenInside = await tx.tickets.findById(tenantId, created.id);
      seenOutside = await store.tickets.findById(tenantId, created.id);
      return created;
    });
    expect(seenInside).toEqual(ticket);
    expect(seenOutside).toBeNull();
    expect(await store.tickets.findById(tenantId, ticket.id)).toEqual(ticket);
    expect(await store.tickets.list(tenantId, {}, { page: 1, per_page: 25 })).toEqual({ items: [ticket], total: 1 });
    expect(await store.tickets.list(tenantId, {}, { page: 2, per_page: 25 })).toEqual({ items: [], total: 1 });
    expect(await store.tickets.list(tenantId, { status: 'open', priority: ticket.priority }, { page: 1, per_page: 25 })).toEqual({ items: [ticket], total: 1 });
  });

  test('When the database is disconnected, then the shared pool is ended with it', async () => {
    const other = createDb(database.url);
    await other.client.count();
    await other.$disconnect();
    expect(other.pool.ended).toBe(true);
  });
});
