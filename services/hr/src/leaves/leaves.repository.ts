import { inListOrder, listCount, listCountRange, listPage, rawSqlOverKysely } from '@msp/db';
import type { RecordChange } from '@msp/events';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import { countOf, type Db } from '../db';
import type { DB, Leave } from '../generated/kysely/database';
import { BLOCKING_STATUSES, type LeaveStatus } from './leave-status';
import type { LeaveType } from './leave.schemas';

export interface LeaveRecord {
  id: string;
  userId: string;
  type: LeaveType;
  status: LeaveStatus;
  /** `YYYY-MM-DD`, inclusive. */
  startDate: string;
  endDate: string;
  workingDays: number;
  /** Of a vacation: its working days a requested or approved sick leave covers (§9 BUrlG). */
  returnedDays: number;
  note: string | null;
  /** ISO 8601, UTC. */
  createdAt: string;
  updatedAt: string;
}

export interface NewLeave {
  userId: string;
  type: LeaveType;
  /** `YYYY-MM-DD`, inclusive. */
  startDate: string;
  endDate: string;
  workingDays: number;
  /** The working days under a contract (`YYYY-MM-DD`), stored one row each for the leave accounts. */
  days: string[];
  note: string | null;
}

export interface LeaveFilter {
  userId?: string;
  status?: LeaveStatus;
  type?: LeaveType;
  /** Leaves that end on or after this day. */
  from?: string;
  /** Leaves that start on or before this day. */
  to?: string;
}

/**
 * A vacation day that a requested or approved sick leave of the same user covers is no vacation day
 * (§9 BUrlG): it returns to the account. The leaves' working days are rows of `leave_days`, so this
 * is an index lookup per day, not a calendar walk. `d` is the vacation's `leave_days` row.
 */
export const SICK_COVERS_DAY = sql<boolean>`EXISTS (SELECT 1 FROM leave_days sd JOIN leaves s ON s.id = sd.leave_id
  WHERE sd.tenant_id = d.tenant_id AND sd.user_id = d.user_id AND sd.day = d.day AND s.type = 'sick' AND s.status IN ('requested', 'approved'))`;

type LeaveRow = Selectable<Leave> & { returned_days: number };

// The columns hold only what the API wrote (and CHECK constraints say so).
const toLeave = (row: LeaveRow): LeaveRecord => ({
  id: row.id,
  userId: row.user_id,
  type: row.type as LeaveType,
  status: row.status as LeaveStatus,
  startDate: row.start_date,
  endDate: row.end_date,
  workingDays: row.working_days,
  returnedDays: row.returned_days,
  note: row.note,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** The tenant's leaves, each vacation with its `returned_days` (its days a sick leave covers) in the same statement. */
const leaves = (db: Db, tenantId: string) =>
  db
    .selectFrom('leaves')
    .selectAll('leaves')
    .select(
      sql<number>`CASE WHEN leaves.type = 'vacation'
        THEN (SELECT count(*)::int FROM leave_days d WHERE d.leave_id = leaves.id AND ${SICK_COVERS_DAY}) ELSE 0 END`.as(
        'returned_days',
      ),
    )
    .where('leaves.tenant_id', '=', tenantId);

/** The tenant's leaves that match the filter. */
const matching = (tenantId: string, filter: LeaveFilter) => (eb: ExpressionBuilder<DB, 'leaves'>) =>
  eb.and([
    eb('leaves.tenant_id', '=', tenantId),
    ...(filter.userId === undefined ? [] : [eb('leaves.user_id', '=', filter.userId)]),
    ...(filter.status === undefined ? [] : [eb('leaves.status', '=', filter.status)]),
    ...(filter.type === undefined ? [] : [eb('leaves.type', '=', filter.type)]),
    ...(filter.from === undefined ? [] : [eb('leaves.end_date', '>=', filter.from)]),
    ...(filter.to === undefined ? [] : [eb('leaves.start_date', '<=', filter.to)]),
  ]);

const LIST_ORDER = { columns: ['leaves.start_date', 'leaves.id'], direction: 'desc' } as const;

const DAY_MS = 86_400_000;

/**
 * The day `days` before or after `day` (`YYYY-MM-DD`), as text that orders as the days do: before
 * 0001-01-01 it is `0000-12-31`, past 9999-12-31 `9999-99-99` (after every day the API takes).
 */
function dayShifted(day: string, days: number): string {
  const shifted = new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString();
  return /^\d{4}-/.test(shifted) ? shifted.slice(0, 10) : '9999-99-99';
}

/**
 * The exact total of the list for at most one kind of filter, from list_counts: the whole list, a
 * user, a status, a type, or `from`/`to` (the leaves touching the range are all of them but those
 * ending before `from` and those starting after `to`; none is both, as no leave ends before it
 * starts and `to` is not before `from`). Null for filters combined: count(*) then.
 */
async function countedTotal(db: Db, tenantId: string, filter: LeaveFilter): Promise<number | null> {
  const given = [filter.userId, filter.status, filter.type].filter((value) => value !== undefined).length;
  const ranged = filter.from !== undefined || filter.to !== undefined;
  if (given + (ranged ? 1 : 0) > 1) return null;
  const list = { tenantId, list: 'leaves' };
  // Ids as PostgreSQL writes them (lower case); the API takes either case.
  if (filter.userId !== undefined)
    return listCount(db, { ...list, dimension: 'user_id', value: filter.userId.toLowerCase() });
  if (filter.status !== undefined) return listCount(db, { ...list, dimension: 'status', value: filter.status });
  if (filter.type !== undefined) return listCount(db, { ...list, dimension: 'type', value: filter.type });
  const [all, endedBefore, startedAfter] = await Promise.all([
    listCount(db, list),
    filter.from === undefined
      ? 0
      : listCountRange(db, { ...list, dimension: 'end_date', to: dayShifted(filter.from, -1) }),
    filter.to === undefined
      ? 0
      : listCountRange(db, { ...list, dimension: 'start_date', from: dayShifted(filter.to, 1) }),
  ]);
  return all - endedBefore - startedAfter;
}

/**
 * Every query is bounded by the caller's tenant: another tenant's leaves are simply not found.
 *
 * `reads` serves the list's page and total alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createLeavesRepository(db: Db, reads: Db = db) {
  const findById = async (tenantId: string, id: string, on: Db = db): Promise<LeaveRecord | null> => {
    const row = await leaves(on, tenantId).where('leaves.id', '=', id).executeTakeFirst();
    return row ? toLeave(row) : null;
  };

  return {
    /**
     * A page and the exact total; latest start first, the id keeping pages stable among leaves
     * starting the same day; by number or after a leave (keyset, at any depth). Each single filter
     * has an index in the list's order (user, status, type; from/to range over the list's own
     * index) and its total from list_counts (countedTotal).
     */
    list(tenantId: string, filter: LeaveFilter, window: ListWindow): Promise<{ items: LeaveRecord[]; total: number }> {
      return listPage({
        window,
        afterKey: async (id) => {
          const row = await reads
            .selectFrom('leaves')
            .select(['start_date', 'id'])
            .where('id', '=', id)
            .where('tenant_id', '=', tenantId)
            .executeTakeFirst();
          return row && [row.start_date, row.id];
        },
        page: async (afterKey) => {
          const page = inListOrder(
            leaves(reads, tenantId).where(matching(tenantId, filter)),
            LIST_ORDER,
            window,
            afterKey,
          );
          return (await page.execute()).map(toLeave);
        },
        total: async () =>
          (await countedTotal(reads, tenantId, filter)) ??
          countOf(reads.selectFrom('leaves').where(matching(tenantId, filter))),
        unknownAfter: unknownAfterItem,
      });
    },

    findById: (tenantId: string, id: string) => findById(tenantId, id),

    /**
     * Inserts the leave unless a requested or approved leave of the same user overlaps it; then
     * nothing is written and that leave is returned as `overlapping`. A sick leave may overlap an
     * approved vacation (§9 BUrlG: the vacation's days it covers return to the account). A transaction-scoped
     * advisory lock per (tenant, user) serialises the check and the insert of concurrent
     * requests, so two overlapping leaves can never both pass (no other path creates a blocking
     * leave: rejected and cancelled ones never come back). `guard`, when given, runs under the same
     * lock before the insert (a throw writes nothing), so the checks it makes against the user's other
     * leaves (the leave balance) hold for concurrent requests too. `record` records the new leave's
     * event in the same transaction.
     */
    createUnlessOverlapping(
      tenantId: string,
      input: NewLeave,
      record: RecordChange<LeaveRecord>,
      guard?: () => Promise<void>,
    ): Promise<{ created: LeaveRecord } | { overlapping: LeaveRecord }> {
      return db.transaction().execute(async (trx) => {
        // Through ::uuid first, so a user id sent in capitals takes the same lock as in lower case.
        await sql`SELECT pg_advisory_xact_lock(hashtext(${tenantId}::uuid::text), hashtext(${input.userId}::uuid::text))`.execute(
          trx,
        );
        const overlapping = await leaves(trx, tenantId)
          .where('leaves.user_id', '=', input.userId)
          .where('leaves.status', 'in', [...BLOCKING_STATUSES])
          .where('leaves.start_date', '<=', input.endDate)
          .where('leaves.end_date', '>=', input.startDate)
          .$if(input.type === 'sick', (query) =>
            query.where((eb) =>
              eb.not(eb.and([eb('leaves.type', '=', 'vacation'), eb('leaves.status', '=', 'approved')])),
            ),
          )
          .orderBy('leaves.start_date')
          .limit(1)
          .executeTakeFirst();
        if (overlapping) return { overlapping: toLeave(overlapping) };
        if (guard) await guard();
        const { id } = await trx
          .insertInto('leaves')
          .values({
            tenant_id: tenantId,
            user_id: input.userId,
            type: input.type,
            status: 'requested',
            start_date: input.startDate,
            end_date: input.endDate,
            working_days: input.workingDays,
            note: input.note,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        if (input.days.length > 0) {
          await trx
            .insertInto('leave_days')
            .values(input.days.map((day) => ({ leave_id: id, tenant_id: tenantId, user_id: input.userId, day })))
            .execute();
        }
        const created = (await findById(tenantId, id, trx))!;
        await record(rawSqlOverKysely(trx), created);
        return { created };
      });
    },

    /**
     * Moves the status only if it is still `from`, and `record`s the move's event: a concurrent
     * move in between makes this a no-op (null), and the caller judges the move again against the
     * new state. The update locks the row until the event is written with it.
     */
    moveStatus(
      tenantId: string,
      id: string,
      from: LeaveStatus,
      to: LeaveStatus,
      record: RecordChange<LeaveRecord>,
    ): Promise<LeaveRecord | null> {
      return db.transaction().execute(async (trx) => {
        const moved = await trx
          .updateTable('leaves')
          .set({ status: to, updated_at: new Date() })
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('status', '=', from)
          .returning('id')
          .executeTakeFirst();
        if (!moved) return null;
        const leave = (await findById(tenantId, id, trx))!;
        await record(rawSqlOverKysely(trx), leave);
        return leave;
      });
    },
  };
}

export type LeavesRepository = ReturnType<typeof createLeavesRepository>;
