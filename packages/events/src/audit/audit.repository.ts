import type { Sql } from '../sql';
import type { AuditEventJson, AuditFilter } from './audit.schemas';

interface EventRow {
  id: string;
  occurred_at: Date;
  type: string;
  resource_type: string;
  resource_id: string;
  actor_client_id: string;
  actor_on_behalf_of: string | null;
  changes: AuditEventJson['changes'];
  request_id: string | null;
}

const toAuditEvent = (row: EventRow): AuditEventJson => ({
  id: row.id,
  occurred_at: new Date(row.occurred_at).toISOString(),
  action: row.type,
  resource_type: row.resource_type,
  resource_id: row.resource_id,
  actor: { client_id: row.actor_client_id, on_behalf_of: row.actor_on_behalf_of },
  changes: row.changes,
  request_id: row.request_id,
});

// Every filter is a parameter; an absent one is NULL and matches everything.
const WHERE = `tenant_id = $1::uuid
  AND ($2::text IS NULL OR resource_type = $2)
  AND ($3::text IS NULL OR resource_id = $3)
  AND ($4::text IS NULL OR actor_client_id = $4 OR actor_on_behalf_of = $4)
  AND ($5::timestamptz IS NULL OR occurred_at >= $5)
  AND ($6::timestamptz IS NULL OR occurred_at < $6)`;

/** The audit log is the event stream read back: one row per change, newest first. */
export function createAuditRepository(db: Sql) {
  return {
    async list(tenantId: string, filter: AuditFilter, window: { skip: number; take: number }): Promise<{ items: AuditEventJson[]; total: number }> {
      const values = [tenantId, filter.resource_type ?? null, filter.resource_id ?? null, filter.actor ?? null, filter.from ?? null, filter.to ?? null];
      const [rows, [count]] = await Promise.all([
        db.$queryRawUnsafe<EventRow[]>(
          `SELECT id::text, occurred_at, type, resource_type, resource_id, actor_client_id, actor_on_behalf_of, changes, request_id
           FROM events WHERE ${WHERE} ORDER BY occurred_at DESC, seq DESC OFFSET $7 LIMIT $8`,
          ...values,
          window.skip,
          window.take,
        ),
        db.$queryRawUnsafe<{ total: number }[]>(`SELECT count(*)::int AS total FROM events WHERE ${WHERE}`, ...values),
      ]);
      return { items: rows.map(toAuditEvent), total: count!.total };
    },
  };
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;
