/*
 * What a service's event stream (the @msp/events outbox table) holds, read straight from its
 * database: the tests of every service assert on the stored rows, not on what the API says.
 */

/** A service's Prisma client, as far as raw SQL goes. */
export interface RawSql {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export interface StoredEvent {
  type: string;
  resource_type: string;
  resource_id: string;
  actor_client_id: string;
  actor_on_behalf_of: string | null;
  request_id: string | null;
  changes: unknown;
  data: unknown;
}

/** The tenant's events as stored, oldest first, in the columns' names. */
export function storedEvents(db: RawSql, tenantId: string): Promise<StoredEvent[]> {
  return db.$queryRawUnsafe<StoredEvent[]>(
    `SELECT type, resource_type, resource_id, actor_client_id, actor_on_behalf_of, request_id, changes, data
     FROM events WHERE tenant_id = $1::uuid ORDER BY seq`,
    tenantId,
  );
}

/**
 * Runs `work` while every insert into `events` fails, as a crash between a change and its event
 * would: the change must roll back with it. The trigger lives in the test's own database.
 */
export async function whileEventsCannotBeStored<T>(db: RawSql, work: () => Promise<T>): Promise<T> {
  await db.$executeRawUnsafe(
    `CREATE OR REPLACE FUNCTION refuse_event() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'boom: events cannot be stored'; END $$ LANGUAGE plpgsql`,
  );
  await db.$executeRawUnsafe(
    'CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_event()',
  );
  try {
    return await work();
  } finally {
    await db.$executeRawUnsafe('DROP TRIGGER refuse_event ON events');
  }
}
