import type { BusinessCalendar } from '@msp/calendar';
import { isoOf, listCountSql, sqlRows, type Queryable } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type SlaPolicy as SlaPolicyRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
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

function toPolicy(row: SlaPolicyRow): SlaPolicy {
  return {
    id: row.id,
    name: row.name,
    calendar_id: row.calendarId,
    is_default: row.isDefault === true,
    targets: row.targets as SlaTargets,
    created_at: isoOf(row.createdAt),
    updated_at: isoOf(row.updatedAt),
  };
}

function toData(policy: SlaPolicyWrite) {
  return {
    name: policy.name,
    calendarId: policy.calendarId,
    // true or NULL, never false: see schema.prisma.
    isDefault: policy.isDefault === undefined ? undefined : policy.isDefault || null,
    targets: policy.targets as object | undefined,
  };
}

/**
 * SQL that holds when no policy applies to a new ticket of the client: the client names none and
 * the tenant has no default. POST /tickets opens such a ticket in its single statement.
 */
export function noPolicyAppliesSql(tenantId: string, clientId: string): Prisma.Sql {
  return Prisma.sql`NOT EXISTS (SELECT 1 FROM clients WHERE id = ${clientId}::uuid AND tenant_id = ${tenantId}::uuid AND sla_policy_id IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM sla_policies WHERE tenant_id = ${tenantId}::uuid AND is_default)`;
}

/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createSlaPoliciesRepository(db: DbTx, reads?: Queryable) {
  async function findById(tenantId: string, id: string): Promise<SlaPolicy | null> {
    const row = await db.slaPolicy.findFirst({ where: { id, tenantId } });
    return row && toPolicy(row);
  }

  return {
    findById,

    /** Newest first, off (tenant_id, created_at, id); the total from list_counts. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: SlaPolicy[]; total: number }> {
      const found = await lists.keysetListPage<SlaPolicyRow>(
        sqlRows(db, reads),
        listWindow(page),
        {
          table: 'sla_policies',
          select: Prisma.raw(`id, tenant_id AS "tenantId", name::text AS name, calendar_id AS "calendarId", is_default AS "isDefault", targets, created_at AS "createdAt", updated_at AS "updatedAt"`),
          scope: Prisma.sql`tenant_id = ${tenantId}::uuid`,
          columns: ['created_at', 'id'],
          direction: 'desc',
          total: listCountSql(tenantId, 'sla_policies'),
        },
      );
      return { items: found.items.map(toPolicy), total: found.total };
    },

    /** Reads the policy and locks it until the transaction ends. */
    async findForUpdate(tenantId: string, id: string): Promise<SlaPolicy | null> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM sla_policies WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      return locked.length ? findById(tenantId, id) : null;
    },

    /** The tenant's default, locked, or null. */
    async findDefaultForUpdate(tenantId: string): Promise<SlaPolicy | null> {
      const [row] = await db.$queryRaw<{ id: string }[]>`SELECT id FROM sla_policies WHERE tenant_id = ${tenantId}::uuid AND is_default FOR UPDATE`;
      return row ? findById(tenantId, row.id) : null;
    },

    /** Throws a unique violation when the name is taken (or, in a race, a second default). */
    async create(tenantId: string, policy: SlaPolicyWrite & { name: string; targets: SlaTargets }): Promise<SlaPolicy> {
      const data = toData(policy);
      return toPolicy(await db.slaPolicy.create({ data: { ...data, name: policy.name, targets: policy.targets as object, tenantId } }));
    },

    async update(tenantId: string, id: string, changes: SlaPolicyWrite): Promise<SlaPolicy> {
      return toPolicy(await db.slaPolicy.update({ where: { id, tenantId }, data: toData(changes) }));
    },

    /** The tenant's policies that count on a calendar, locked until the transaction ends. */
    async usingCalendarForUpdate(tenantId: string, calendarId: string): Promise<SlaPolicy[]> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM sla_policies WHERE tenant_id = ${tenantId}::uuid AND calendar_id = ${calendarId}::uuid ORDER BY id FOR UPDATE`;
      if (!locked.length) return [];
      return (await db.slaPolicy.findMany({ where: { tenantId, id: { in: locked.map((row) => row.id) } }, orderBy: { id: 'asc' } })).map(toPolicy);
    },

    async clientsUsing(tenantId: string, id: string): Promise<number> {
      return db.client.count({ where: { tenantId, slaPolicyId: id } });
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.slaPolicy.delete({ where: { id, tenantId } });
    },

    /**
     * The policy a new ticket of the client takes (the client's, else the tenant's default) with its
     * calendar as it is now, or null. Share-locked, so neither changes before the ticket's copy commits.
     */
    async snapshotFor(tenantId: string, clientId: string): Promise<PolicySnapshot | null> {
      const [row] = await db.$queryRaw<{ id: string; targets: SlaTargets; time_zone: string | null; hours: unknown; holidays: unknown; closed_days: string[] | null }[]>`
        SELECT p.id, p.targets, c.time_zone, c.hours, c.holidays, c.closed_days
        FROM sla_policies p LEFT JOIN calendars c ON c.id = p.calendar_id
        WHERE p.tenant_id = ${tenantId}::uuid
          AND p.id = coalesce(
            (SELECT sla_policy_id FROM clients WHERE id = ${clientId}::uuid AND tenant_id = ${tenantId}::uuid),
            (SELECT id FROM sla_policies WHERE tenant_id = ${tenantId}::uuid AND is_default))
        FOR SHARE OF p`;
      if (!row) return null;
      const calendar =
        row.time_zone === null
          ? null
          : ({ time_zone: row.time_zone, hours: row.hours, holidays: row.holidays ?? null, closed_days: row.closed_days ?? [] } as BusinessCalendar);
      return { policyId: row.id, targets: row.targets, calendar };
    },
  };
}

export type SlaPoliciesRepository = ReturnType<typeof createSlaPoliciesRepository>;
