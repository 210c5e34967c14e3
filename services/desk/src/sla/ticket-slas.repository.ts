import type { BusinessCalendar } from '@msp/calendar';
import { isoTimestampSql } from '@msp/db';
import type { DbTx } from '../db';
import { Prisma, type TicketSla as TicketSlaRow } from '../generated/prisma/client';
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

const clockJson = (target: SlaTargetName) => `jsonb_build_object(
    'due_at', ${isoTimestampSql(`s.${target}_due_at`)},
    'completed_at', ${isoTimestampSql(`s.${target}_completed_at`)},
    'status', CASE WHEN ${breachedSql[target]} THEN 'breached' WHEN ${metSql[target]} THEN 'met'${target === 'resolution' ? ` WHEN ${PAUSED_SQL} THEN 'paused'` : ''} ELSE 'running' END)`;

/** A column of a query over `tickets`: the ticket's `sla` as the API shows it, or null. */
export const TICKET_SLA_COLUMN = `(SELECT jsonb_build_object('policy_id', s.policy_id, 'first_response', ${clockJson('first_response')}, 'resolution', ${clockJson('resolution')})
  FROM ticket_slas s WHERE s.ticket_id = tickets.id) AS sla`;

/** The due time of the ticket's next running target (null: none runs), for `sort=sla_due_at`. */
export const SLA_NEXT_DUE_SQL = Prisma.raw(`(SELECT LEAST(
    CASE WHEN s.first_response_completed_at IS NULL THEN s.first_response_due_at END,
    CASE WHEN s.resolution_stopped_at IS NULL THEN s.resolution_due_at END)
  FROM ticket_slas s WHERE s.ticket_id = tickets.id)`);

/** A condition on a query over `tickets`: its SLA clocks are in `status` (see SLA_LIST_STATUSES). */
export function slaStatusSql(status: SlaListStatus, atRiskMinutes: number): Prisma.Sql {
  const breached = `(${breachedSql.first_response} OR ${breachedSql.resolution})`;
  const running = `(${runningSql.first_response} OR ${runningSql.resolution})`;
  const condition: Record<SlaListStatus, Prisma.Sql> = {
    breached: Prisma.raw(breached),
    running: Prisma.raw(`NOT ${breached} AND ${running}`),
    at_risk: Prisma.sql`NOT ${Prisma.raw(breached)} AND (
      (${Prisma.raw(runningSql.first_response)} AND s.first_response_due_at <= now() + make_interval(mins => ${atRiskMinutes}::int))
      OR (${Prisma.raw(runningSql.resolution)} AND s.resolution_due_at <= now() + make_interval(mins => ${atRiskMinutes}::int)))`,
    paused: Prisma.raw(`NOT ${breached} AND NOT ${running} AND ${PAUSED_SQL}`),
    met: Prisma.raw(`${metSql.first_response} AND ${metSql.resolution}`),
  };
  return Prisma.sql`EXISTS (SELECT 1 FROM ticket_slas s WHERE s.ticket_id = tickets.id AND ${condition[status]})`;
}

export interface TicketSlaRecord extends SlaClocks {
  ticketId: string;
  tenantId: string;
  policyId: string;
}

function toRecord(row: TicketSlaRow): TicketSlaRecord {
  return {
    ticketId: row.ticketId,
    tenantId: row.tenantId,
    policyId: row.policyId,
    calendar: row.calendar as BusinessCalendar | null,
    targets: row.targets as SlaTargets,
    firstResponse: { dueAt: row.firstResponseDueAt, completedAt: row.firstResponseCompletedAt, breachedAt: row.firstResponseBreachedAt },
    resolution: {
      dueAt: row.resolutionDueAt,
      completedAt: row.resolutionCompletedAt,
      stoppedAt: row.resolutionStoppedAt,
      pausedMinutes: row.resolutionPausedMinutes,
      breachedAt: row.resolutionBreachedAt,
    },
  };
}

function clockColumns(clocks: SlaClocks) {
  return {
    firstResponseDueAt: clocks.firstResponse.dueAt,
    firstResponseCompletedAt: clocks.firstResponse.completedAt,
    firstResponseBreachedAt: clocks.firstResponse.breachedAt,
    resolutionDueAt: clocks.resolution.dueAt,
    resolutionCompletedAt: clocks.resolution.completedAt,
    resolutionStoppedAt: clocks.resolution.stoppedAt,
    resolutionPausedMinutes: clocks.resolution.pausedMinutes,
    resolutionBreachedAt: clocks.resolution.breachedAt,
  };
}

/** The columns of each target that the breach sweep reads: due, done, breached. */
const SWEEP = {
  first_response: { due: 'first_response_due_at', done: 'first_response_completed_at', breached: 'first_response_breached_at' },
  resolution: { due: 'resolution_due_at', done: 'resolution_stopped_at', breached: 'resolution_breached_at' },
} as const;

export function createTicketSlasRepository(db: DbTx) {
  return {
    async create(record: TicketSlaRecord): Promise<void> {
      await db.ticketSla.create({
        data: {
          ticketId: record.ticketId,
          tenantId: record.tenantId,
          policyId: record.policyId,
          calendar: record.calendar ? (record.calendar as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
          targets: record.targets as object,
          ...clockColumns(record),
        },
      });
    },

    /** The ticket's clocks, locked until the transaction ends (the breach sweep skips them meanwhile), or null. */
    async findForUpdate(tenantId: string, ticketId: string): Promise<TicketSlaRecord | null> {
      const locked = await db.$queryRaw<{ ticket_id: string }[]>`SELECT ticket_id FROM ticket_slas WHERE ticket_id = ${ticketId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      if (!locked.length) return null;
      return toRecord(await db.ticketSla.findUniqueOrThrow({ where: { ticketId } }));
    },

    async save(record: TicketSlaRecord): Promise<void> {
      await db.ticketSla.update({ where: { ticketId: record.ticketId }, data: clockColumns(record) });
    },

    /** The ticket's `sla` as its reads show it. */
    async json(ticketId: string): Promise<TicketSla | null> {
      const [row] = await db.$queryRawUnsafe<{ sla: TicketSla | null }[]>(`SELECT ${TICKET_SLA_COLUMN} FROM tickets WHERE tickets.id = $1::uuid`, ticketId);
      return row?.sla ?? null;
    },

    /**
     * Claims up to `limit` targets of `target` whose due time passed while their clock ran and that
     * are not breached yet, marking them breached: rows another sweep (another replica) or a ticket's change
     * holds are skipped, and a claimed row no longer matches, so each breach is claimed once.
     * Answers the claimed tickets.
     */
    async claimBreaches(target: SlaTargetName, limit: number): Promise<{ ticketId: string; tenantId: string }[]> {
      const c = SWEEP[target];
      const rows = await db.$queryRawUnsafe<{ ticket_id: string; tenant_id: string }[]>(
        `UPDATE ticket_slas SET ${c.breached} = now()
         WHERE ticket_id IN (
           SELECT ticket_id FROM ticket_slas
           WHERE ${c.due} < now() AND ${c.breached} IS NULL AND (${c.done} IS NULL OR ${c.done} > ${c.due})
           ORDER BY ${c.due} LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING ticket_id, tenant_id`,
        limit,
      );
      return rows.map((row) => ({ ticketId: row.ticket_id, tenantId: row.tenant_id }));
    },
  };
}

export type TicketSlasRepository = ReturnType<typeof createTicketSlasRepository>;
