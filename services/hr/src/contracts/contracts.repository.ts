import { inListOrder, listPage, rawSqlOverKysely, unlessDuplicate } from '@msp/db';
import type { RecordChange } from '@msp/events';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import type { GermanState, Weekday } from '@msp/calendar';
import type { Selectable } from 'kysely';
import { countOf, type Db } from '../db';
import type { Contract } from '../generated/kysely/database';
import { contractOn, type ContractTerms } from './contract-rules';

export interface ContractRecord extends ContractTerms {
  id: string;
  employeeId: string;
  /** ISO 8601, UTC. */
  createdAt: string;
}

export type NewContract = ContractTerms;

/** The employee already has a contract starting that day. */
export class DuplicateContractError extends Error {
  constructor() {
    super('duplicate contract valid_from');
    this.name = 'DuplicateContractError';
  }
}

// The columns hold only what the API wrote (weekdays, a state's code); the decimal's text is a whole or half day.
export function toContract(row: Selectable<Contract>): ContractRecord {
  return {
    id: row.id,
    employeeId: row.employee_id,
    validFrom: row.valid_from,
    weeklyMinutes: row.weekly_minutes,
    workingDays: row.working_days as Weekday[],
    vacationDaysPerYear: Number(row.vacation_days_per_year),
    state: row.state as GermanState,
    openingBalanceMinutes: row.opening_balance_minutes,
    timeZone: row.time_zone,
    createdAt: row.created_at.toISOString(),
  };
}

const LIST_ORDER = { columns: ['valid_from', 'id'], direction: 'desc' } as const;

/**
 * Every query is bounded by the caller's tenant: another tenant's contracts are simply not found.
 *
 * `reads` serves the list's page and total alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createContractsRepository(db: Db, reads: Db = db) {
  /** An employee's contracts (by employee id or by its desk user id), oldest first. */
  async function history(tenantId: string, by: { employeeId: string } | { userId: string }): Promise<ContractRecord[]> {
    const rows = await db
      .selectFrom('contracts')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where(
        'employee_id',
        '=',
        'employeeId' in by
          ? by.employeeId
          : db.selectFrom('employees').select('id').where('tenant_id', '=', tenantId).where('user_id', '=', by.userId),
      )
      .orderBy('valid_from')
      .execute();
    return rows.map(toContract);
  }

  return {
    history,

    /**
     * The contract valid on `day` (`YYYY-MM-DD`) for the employee of the desk user `userId`, or
     * null (no employee, or no contract yet on that day). For the features that judge a day by the
     * employee's contract (timesheets, leave).
     */
    async validOn(tenantId: string, userId: string, day: string): Promise<ContractRecord | null> {
      return contractOn(await history(tenantId, { userId }), day);
    },

    /**
     * Latest `valid_from` first, by number or after a contract of the employee (keyset). The list is
     * one employee's history: its page and its exact total (count(*)) both read the unique index
     * (tenant, employee, valid_from), bounded by that employee's contracts, not by the tenant's size;
     * so contracts keep no list_counts counter.
     */
    list(
      tenantId: string,
      employeeId: string,
      window: ListWindow,
    ): Promise<{ items: ContractRecord[]; total: number }> {
      const ofEmployee = reads
        .selectFrom('contracts')
        .where('tenant_id', '=', tenantId)
        .where('employee_id', '=', employeeId);
      return listPage({
        window,
        afterKey: async (id) => {
          const row = await ofEmployee.select(['valid_from', 'id']).where('id', '=', id).executeTakeFirst();
          return row && [row.valid_from, row.id];
        },
        page: async (afterKey) =>
          (await inListOrder(ofEmployee.selectAll(), LIST_ORDER, window, afterKey).execute()).map(toContract),
        total: () => countOf(ofEmployee),
        unknownAfter: unknownAfterItem,
      });
    },

    /** Adds the contract and `record`s its event in the same transaction. */
    create(
      tenantId: string,
      employeeId: string,
      input: NewContract,
      record: RecordChange<ContractRecord>,
    ): Promise<ContractRecord> {
      const created = db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('contracts')
          .values({
            tenant_id: tenantId,
            employee_id: employeeId,
            valid_from: input.validFrom,
            weekly_minutes: input.weeklyMinutes,
            working_days: [...input.workingDays],
            vacation_days_per_year: String(input.vacationDaysPerYear),
            state: input.state,
            opening_balance_minutes: input.openingBalanceMinutes,
            time_zone: input.timeZone,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        const contract = toContract(row);
        await record(rawSqlOverKysely(trx), contract);
        return contract;
      });
      // Its one unique key besides the id: (tenant, employee, valid_from).
      return unlessDuplicate(created, () => new DuplicateContractError());
    },
  };
}

export type ContractsRepository = ReturnType<typeof createContractsRepository>;
