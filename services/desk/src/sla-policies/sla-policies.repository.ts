import type { BusinessCalendar } from '@msp/calendar';
import { inListOrder, listCount, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import { sql, type RawBuilder, type Selectable } from 'kysely';
import { jsonb, type Db } from '../db';
import type { SlaPolicy as SlaPolicyRow } from '../generated/kysely/database';
import { pageOfList } from '../shared/lists';
import type { SlaPolicy, SlaTargets } from './sla-policy.schemas';

export interface SlaPolicyWrite {
  name?: string;
  calendarId?: string | null;
  isDefault?: boolean;
  targets?: SlaTargets;
}

/** What a new ticket copies of its policy: the targets, and the calendar as it is now (null: 24×7). */
export interface PolicySnapshot {
  policyId: string;
  targets: SlaTargets;
  calendar: BusinessCalendar | null;
}

function toPolicy(row: Selectable<SlaPolicyRow>): SlaPolicy {
  return {
    id: row.id,
    name: row.name,
    calendar_id: row.calendar_id,
    is_default: row.is_default === true,
    targets: row.targets as SlaTargets,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The columns a write sets: only the fields it gives (undefined is left out). */
function toColumns(policy: SlaPolicyWrite) {
  return {
    name: policy.name,
    calendar_id: policy.calendarId,
    // true or NULL, never false: see schema.prisma.
    is_default: policy.isDefault === undefined ? undefined : policy.isDefault || null,
    targets: policy.targets === undefined ? undefined : jsonb(policy.targets),
  };
}

/** Newest first, off (tenant_id, created_at, id). */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };

/**
 * SQL that holds when no policy applies to a new ticket of the client: the client names none and
 * the tenant has no default. POST /tickets opens such a ticket in its single statement.
 */
export function noPolicyAppliesSql(tenantId: string, clientId: string): RawBuilder<boolean> {
  return sql<boolean>`NOT EXISTS (SELECT 1 FROM clients WHERE id = ${clientId}::uuid AND tenant_id = ${tenantId}::uuid AND sla_policy_id IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM sla_policies WHERE tenant_id = ${tenantId}::uuid AND is_default)`;
}

/** `reads`: where the list's page and total are read (the read replica with DATABASE_READ_URL); the rest reads `db`. */
export function createSlaPoliciesRepository(db: Db, reads: Db = db) {
  async function findById(tenantId: string, id: string): Promise<SlaPolicy | null> {
    const row = await db
      .selectFrom('sla_policies')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row ? toPolicy(row) : null;
  }

  return {
    findById,

    /** Newest first, off (tenant_id, created_at, id); the total from list_counts. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: SlaPolicy[]; total: number }> {
      const scope = reads.selectFrom('sla_policies').where('tenant_id', '=', tenantId);
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: (window, afterKey) => inListOrder(scope.selectAll(), ORDER, window, afterKey).execute(),
        total: () => listCount(reads, { tenantId, list: 'sla_policies' }),
      });
      return { items: found.items.map(toPolicy), total: found.total };
    },

    /** Reads the policy and locks it until the transaction ends. */
    async findForUpdate(tenantId: string, id: string): Promise<SlaPolicy | null> {
      const row = await db
        .selectFrom('sla_policies')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return row ? toPolicy(row) : null;
    },

    /** The tenant's default, locked, or null. */
    async findDefaultForUpdate(tenantId: string): Promise<SlaPolicy | null> {
      const row = await db
        .selectFrom('sla_policies')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('is_default', '=', true)
        .forUpdate()
        .executeTakeFirst();
      return row ? toPolicy(row) : null;
    },

    /** Throws a unique violation when the name is taken (or, in a race, a second default). */
    async create(tenantId: string, policy: SlaPolicyWrite & { name: string; targets: SlaTargets }): Promise<SlaPolicy> {
      const row = await db
        .insertInto('sla_policies')
        .values({ ...toColumns(policy), name: policy.name, targets: jsonb(policy.targets), tenant_id: tenantId })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toPolicy(row);
    },

    async update(tenantId: string, id: string, changes: SlaPolicyWrite): Promise<SlaPolicy> {
      const row = await db
        .updateTable('sla_policies')
        .set({ ...toColumns(changes), updated_at: new Date() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toPolicy(row);
    },

    /** The tenant's policies that count on a calendar, locked until the transaction ends. */
    async usingCalendarForUpdate(tenantId: string, calendarId: string): Promise<SlaPolicy[]> {
      const rows = await db
        .selectFrom('sla_policies')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('calendar_id', '=', calendarId)
        .orderBy('id')
        .forUpdate()
        .execute();
      return rows.map(toPolicy);
    },

    async clientsUsing(tenantId: string, id: string): Promise<number> {
      const row = await db
        .selectFrom('clients')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('tenant_id', '=', tenantId)
        .where('sla_policy_id', '=', id)
        .executeTakeFirstOrThrow();
      return row.count;
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.deleteFrom('sla_policies').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
    },

    /**
     * The policy a new ticket of the client takes (the client's, else the tenant's default) with its
     * calendar as it is now, or null. Share-locked, so neither changes before the ticket's copy commits.
     */
    async snapshotFor(tenantId: string, clientId: string): Promise<PolicySnapshot | null> {
      const { rows } = await sql<{
        id: string;
        targets: SlaTargets;
        time_zone: string | null;
        hours: unknown;
        holidays: unknown;
        closed_days: string[] | null;
      }>`
        SELECT p.id, p.targets, c.time_zone, c.hours, c.holidays, c.closed_days
        FROM sla_policies p LEFT JOIN calendars c ON c.id = p.calendar_id
        WHERE p.tenant_id = ${tenantId}::uuid
          AND p.id = coalesce(
            (SELECT sla_policy_id FROM clients WHERE id = ${clientId}::uuid AND tenant_id = ${tenantId}::uuid),
            (SELECT id FROM sla_policies WHERE tenant_id = ${tenantId}::uuid AND is_default))
        FOR SHARE OF p`.execute(db);
      const row = rows[0];
      if (!row) return null;
      const calendar =
        row.time_zone === null
          ? null
          : ({
              time_zone: row.time_zone,
              hours: row.hours,
              holidays: row.holidays ?? null,
              closed_days: row.closed_days ?? [],
            } as BusinessCalendar);
      return { policyId: row.id, targets: row.targets, calendar };
    },
  };
}

export type SlaPoliciesRepository = ReturnType<typeof createSlaPoliciesRepository>;
