import type { BusinessCalendar } from '@msp/calendar';
import { isoTimestampSql } from '@msp/db';
import { sql, type RawBuilder, type Selectable } from 'kysely';
import { jsonb, type Db } from '../db';
import type { TicketSla as TicketSlaRow } from '../generated/kysely/database';
import type { SlaTargets } from '../sla-policies/sla-policy.schemas';
import type { SlaClocks } from './sla-clock';
import type { SlaListStatus, SlaTargetName, TicketSla } from './sla.schemas';

/*
 * The ticket_slas table: a ticket's SLA clocks, beside the ticket. The ticket's reads take its
 * `sla` from here as one JSON value, built by PostgreSQL with each target's status as of now(),
 * the same expressions the list's filter uses.
 */

const breachedSql = {
  first_response: `(s.first_response_breached_at IS NOT NULL OR coalesce(s.first_response_completed_at, now()) > s.first_response_due_at)`,
  resolution: `(s.resolution_breached_at IS NOT NULL OR coalesce(s.resolution_stopped_at, now()) > s.resolution_due_at)`,
};
const runningSql = {
  first_response: `(s.first_response_completed_at IS NULL AND NOT ${breachedSql.first_response})`,
  resolution: `(s.resolution_stopped_at IS NULL AND NOT ${breachedSql.resolution})`,
};
const metSql = {
  first_response: `(s.first_response_completed_at IS NOT NULL AND NOT ${breachedSql.first_response})`,
  resolution: `(s.resolution_completed_at IS NOT NULL AND NOT ${breachedSql.resolution})`,
};
const PAUSED_SQL = `(s.resolution_stopped_at IS NOT NULL AND s.resolution_completed_at IS NULL AND NOT ${breachedSql.resolution})`;

/**
 * A due time the calendar cannot give (sla-clock.ts: null) is stored as the last instant the API
 * can show, so that the column stays NOT NULL for the partial index, the due-time counters and
 * their triggers, which read it as "not due in any window": it sorts after every known due time,
 * is never breached and never at risk. Reads answer null for it.
 */
const UNKNOWN_DUE = new Date('9999-12-31T23:59:59.999Z');
const UNKNOWN_DUE_SQL = `'9999-12-31 23:59:59.999+00'::timestamptz`;
const dueIn = (dueAt: Date | null) => dueAt ?? UNKNOWN_DUE;
const dueOut = (dueAt: Date) => (dueAt.getTime() >= UNKNOWN_DUE.getTime() ? null : dueAt);

const clockJson = (target: SlaTargetName) => `jsonb_build_object(
    'due_at', ${isoTimestampSql(`NULLIF(s.${target}_due_at, ${UNKNOWN_DUE_SQL})`)},
    'completed_at', ${isoTimestampSql(`s.${target}_completed_at`)},
    'status', CASE WHEN ${breachedSql[target]} THEN 'breached' WHEN ${metSql[target]}
      THEN 'met'${target === 'resolution' ? ` WHEN ${PAUSED_SQL} THEN 'paused'` : ''} ELSE 'running' END)`;

/**
 * The ticket's `sla` as the API shows it, from its clocks' row `s` (null when it has none): an
 * expression of a query over `tickets` joined to its clocks (TICKET_SLA_JOIN).
 */
export const SLA_JSON_SQL = `CASE WHEN s.ticket_id IS NOT NULL
  THEN jsonb_build_object('policy_id', s.policy_id, 'first_response', ${clockJson('first_response')}, 'resolution',
  ${clockJson('resolution')}) END`;

/**
 * Joins a query over `tickets` to its clocks as `s`: one probe of ticket_slas' primary key per
 * ticket read (a page's 25), as the correlated subselect of before cost, but a plan can also start
 * from the clocks (an SLA filter or order) and read the tickets by id.
 */
export const TICKET_SLA_JOIN = 'LEFT JOIN ticket_slas s ON s.ticket_id = tickets.id';

/** A column of a query over `tickets` that cannot join (a RETURNING): the ticket's `sla`, or null. */
export const TICKET_SLA_COLUMN = `(SELECT ${SLA_JSON_SQL} FROM ticket_slas s WHERE s.ticket_id = tickets.id) AS sla`;

/**
 * `sort=sla_due_at` over TICKET_SLA_JOIN: the next running target's due time first, tickets without
 * one last, newest first among equals. `clocked`: every ticket listed has a next due time (a
 * `running` or `at_risk` filter), so the same order is the partial index's own, in its columns.
 */
export function slaNextDueOrder(clocked: boolean): RawBuilder<unknown> {
  return clocked
    ? sql.raw('s.next_due_at, s.ticket_created_at DESC, s.ticket_id DESC')
    : sql.raw('s.next_due_at ASC NULLS LAST, tickets.created_at DESC, tickets.id DESC');
}

/**
 * The clocks of which no target is breached by a stored fact: no breach recorded by the sweep, and
 * no target done (first response) or stopped (resolution) after its due time. Word for word the
 * predicate of the partial index ticket_slas_tenant_id_next_due_at_idx (the migration
 * list_indexes): PostgreSQL uses a partial index only for a query whose WHERE states it. The
 * same predicate is the SQL function ticket_sla_due_counted (migration sla_due_counted), which the
 * due-time counters' trigger and ticket_sla_due_count call; the list keeps the text, so that its
 * plans do not hang on the planner inlining a function.
 */
const UNBREACHED_BY_RECORD = `s.first_response_breached_at IS NULL AND s.resolution_breached_at IS NULL
  AND (s.first_response_completed_at IS NULL OR s.first_response_completed_at <= s.first_response_due_at)
  AND (s.resolution_stopped_at IS NULL OR s.resolution_stopped_at <= s.resolution_due_at)
  AND s.next_due_at IS NOT NULL`;

/**
 * A condition on a query over `tickets` joined to its clocks as `s` (TICKET_SLA_JOIN), or on
 * ticket_slas `s` alone: its SLA clocks are in `status` (see SLA_LIST_STATUSES), as of now().
 *
 * `running` and `at_risk` are ranges of `next_due_at` (the least due time of the running targets)
 * within UNBREACHED_BY_RECORD, so both read the partial index (tenant_id, next_due_at) in its
 * order. The same as the definitions (breachedSql, runningSql): a running target is breached by
 * time once now() passes its due time, so "none breached and one running" is "none breached by
 * record, one running, and every running one's due time ≥ now()", that is next_due_at ≥ now();
 * and "a running target due within m minutes" is next_due_at ≤ now() + m (LEAST skips the targets
 * that are not running). The other three keep the definitions' expressions.
 */
export function slaStatusSql(tenantId: string, status: SlaListStatus, atRiskMinutes: number): RawBuilder<boolean> {
  const breached = `(${breachedSql.first_response} OR ${breachedSql.resolution})`;
  const running = `(${runningSql.first_response} OR ${runningSql.resolution})`;
  const condition: Record<SlaListStatus, RawBuilder<unknown>> = {
    breached: sql.raw(breached),
    running: sql.raw(`${UNBREACHED_BY_RECORD} AND s.next_due_at >= now()`),
    at_risk: sql`${sql.raw(UNBREACHED_BY_RECORD)} AND s.next_due_at >= now() AND s.next_due_at <= now() + make_interval(mins => ${atRiskMinutes}::int)`,
    paused: sql.raw(`NOT ${breached} AND NOT ${running} AND ${PAUSED_SQL}`),
    met: sql.raw(`${metSql.first_response} AND ${metSql.resolution}`),
  };
  // s.tenant_id is the ticket's (the clocks are created with it): stated, the index's first column serves.
  return sql<boolean>`s.tenant_id = ${tenantId}::uuid AND ${condition[status]}`;
}

/**
 * The total of `sla_status` alone (no other filter, no `q`): how many of the tenant's tickets have
 * clocks in that state. `running` and `at_risk` are ranges of next_due_at, counted by the
 * migration's ticket_sla_due_count: the 10-second buckets of due times wholly inside the range
 * from ticket_sla_due_counts (kept by triggers in the writing transaction), the two partial
 * buckets at its ends off the partial index, so the count does not grow with the backlog of clocks
 * due in the window. The other states count their clocks.
 */
export function slaStatusTotalSql(
  tenantId: string,
  status: SlaListStatus,
  atRiskMinutes: number,
): RawBuilder<{ count: number }> {
  if (status === 'running') return sql`SELECT ticket_sla_due_count(${tenantId}::uuid, now(), NULL) AS count`;
  if (status === 'at_risk')
    return sql`SELECT ticket_sla_due_count(${tenantId}::uuid, now(), now() + make_interval(mins => ${atRiskMinutes}::int)) AS count`;
  return sql`SELECT count(*) FROM ticket_slas s WHERE ${slaStatusSql(tenantId, status, atRiskMinutes)}`;
}

export interface TicketSlaRecord extends SlaClocks {
  ticketId: string;
  /** The ticket's created_at (sort=sla_due_at's tie-break, in the index). */
  ticketCreatedAt: Date;
  tenantId: string;
  policyId: string;
}

function toRecord(row: Selectable<TicketSlaRow>): TicketSlaRecord {
  return {
    ticketId: row.ticket_id,
    ticketCreatedAt: row.ticket_created_at,
    tenantId: row.tenant_id,
    policyId: row.policy_id,
    calendar: row.calendar as BusinessCalendar | null,
    targets: row.targets as SlaTargets,
    firstResponse: {
      dueAt: dueOut(row.first_response_due_at),
      completedAt: row.first_response_completed_at,
      breachedAt: row.first_response_breached_at,
    },
    resolution: {
      dueAt: dueOut(row.resolution_due_at),
      completedAt: row.resolution_completed_at,
      stoppedAt: row.resolution_stopped_at,
      pausedMinutes: row.resolution_paused_minutes,
      breachedAt: row.resolution_breached_at,
    },
  };
}

function clockColumns(clocks: SlaClocks) {
  return {
    first_response_due_at: dueIn(clocks.firstResponse.dueAt),
    first_response_completed_at: clocks.firstResponse.completedAt,
    first_response_breached_at: clocks.firstResponse.breachedAt,
    resolution_due_at: dueIn(clocks.resolution.dueAt),
    resolution_completed_at: clocks.resolution.completedAt,
    resolution_stopped_at: clocks.resolution.stoppedAt,
    resolution_paused_minutes: clocks.resolution.pausedMinutes,
    resolution_breached_at: clocks.resolution.breachedAt,
  };
}

/** The columns of each target that the breach sweep reads: due, done, breached. */
const SWEEP = {
  first_response: {
    due: 'first_response_due_at',
    done: 'first_response_completed_at',
    breached: 'first_response_breached_at',
  },
  resolution: { due: 'resolution_due_at', done: 'resolution_stopped_at', breached: 'resolution_breached_at' },
} as const;

export function createTicketSlasRepository(db: Db) {
  return {
    async create(record: TicketSlaRecord): Promise<void> {
      await db
        .insertInto('ticket_slas')
        .values({
          ticket_id: record.ticketId,
          ticket_created_at: record.ticketCreatedAt,
          tenant_id: record.tenantId,
          policy_id: record.policyId,
          calendar: jsonb(record.calendar),
          targets: jsonb(record.targets),
          ...clockColumns(record),
        })
        .execute();
    },

    /** The ticket's clocks, locked until the transaction ends (the breach sweep skips them meanwhile), or null. */
    async findForUpdate(tenantId: string, ticketId: string): Promise<TicketSlaRecord | null> {
      const row = await db
        .selectFrom('ticket_slas')
        .selectAll()
        .where('ticket_id', '=', ticketId)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async save(record: TicketSlaRecord): Promise<void> {
      await db.updateTable('ticket_slas').set(clockColumns(record)).where('ticket_id', '=', record.ticketId).execute();
    },

    /** The ticket's `sla` as its reads show it. */
    async json(ticketId: string): Promise<TicketSla | null> {
      const { rows } = await sql<{
        sla: TicketSla | null;
      }>`SELECT ${sql.raw(SLA_JSON_SQL)} AS sla FROM ticket_slas s WHERE s.ticket_id = ${ticketId}::uuid`.execute(db);
      return rows[0]?.sla ?? null;
    },

    /**
     * Claims up to `limit` targets of `target` whose due time passed while their clock ran and that
     * are not breached yet, marking them breached: rows another sweep (another replica) or a ticket's change
     * holds are skipped, and a claimed row no longer matches, so each breach is claimed once.
     * Answers the claimed tickets.
     */
    async claimBreaches(target: SlaTargetName, limit: number): Promise<{ ticketId: string; tenantId: string }[]> {
      const c = SWEEP[target];
      const { rows } = await sql<{
        ticket_id: string;
        tenant_id: string;
      }>`UPDATE ticket_slas SET ${sql.ref(c.breached)} = now()
         WHERE ticket_id IN (
           SELECT ticket_id FROM ticket_slas
           WHERE ${sql.ref(c.due)} < now() AND ${sql.ref(c.breached)} IS NULL AND (${sql.ref(c.done)} IS NULL OR ${sql.ref(c.done)} > ${sql.ref(c.due)})
           ORDER BY ${sql.ref(c.due)} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
         RETURNING ticket_id, tenant_id`.execute(db);
      return rows.map((row) => ({ ticketId: row.ticket_id, tenantId: row.tenant_id }));
    },
  };
}

export type TicketSlasRepository = ReturnType<typeof createTicketSlasRepository>;
