import type { RecordChange } from '@msp/events';
import { sqlRows } from '@msp/db';
import type { ListWindow } from '@msp/http';
import type { GermanState, Weekday } from '@msp/calendar';
import { violatedUniqueConstraint, type Db } from '../db';
import { dayToDate } from '../calendar';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../list-pages';
import { contractOn, type ContractTerms } from './contract-rules';

export interface ContractRecord extends ContractTerms {
  id: string;
  employeeId: string;
  createdAt: Date;
}

export type NewContract = ContractTerms;

/** The employee already has a contract starting that day. */
export class DuplicateContractError extends Error {
  constructor() {
    super('duplicate contract valid_from');
    this.name = 'DuplicateContractError';
  }
}

/** Dates as text and the decimal as a number, so the pool and Prisma's raw reads give the same. */
export const CONTRACT_COLUMNS = Prisma.sql`c.id, c.employee_id, to_char(c.valid_from, 'YYYY-MM-DD') AS valid_from, c.weekly_minutes, c.working_days,
  c.vacation_days_per_year::float8 AS vacation_days_per_year, c.state, c.opening_balance_minutes, c.time_zone, c.created_at`;

export interface ContractSqlRow {
  id: string;
  employee_id: string;
  valid_from: string;
  weekly_minutes: number;
  working_days: string[];
  vacation_days_per_year: number;
  state: string;
  opening_balance_minutes: number | null;
  time_zone: string;
  created_at: string | Date;
}

// The columns hold only what the API wrote.
export function contractFromSql(row: ContractSqlRow): ContractRecord {
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
    createdAt: new Date(row.created_at),
  };
}

/** Every query is bounded by the caller's tenant: another tenant's contracts are simply not found. */
export function createContractsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);

  /** An employee's contracts (by employee id or by its desk user id), oldest first. */
  async function history(tenantId: string, by: { employeeId: string } | { userId: string }): Promise<ContractRecord[]> {
    const who =
      'employeeId' in by
        ? Prisma.sql`c.employee_id = ${by.employeeId}::uuid`
        : Prisma.sql`c.employee_id = (SELECT e.id FROM employees e WHERE e.tenant_id = ${tenantId}::uuid AND e.user_id = ${by.userId}::uuid)`;
    const found = await rows<ContractSqlRow>(Prisma.sql`SELECT ${CONTRACT_COLUMNS} FROM contracts c WHERE c.tenant_id = ${tenantId}::uuid AND ${who} ORDER BY c.valid_from`);
    return found.map(contractFromSql);
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
    async list(tenantId: string, employeeId: string, window: ListWindow): Promise<{ items: ContractRecord[]; total: number }> {
      const scope = Prisma.sql`tenant_id = ${tenantId}::uuid AND employee_id = ${employeeId}::uuid`;
      const { items, total } = await lists.keysetListPage<ContractSqlRow>(rows, window, { table: 'contracts', alias: 'c', select: CONTRACT_COLUMNS, scope, columns: ['valid_from', 'id'], direction: 'desc', total: Prisma.sql`SELECT count(*) FROM contracts c WHERE ${scope}` });
      return { items: items.map(contractFromSql), total };
    },

    /** Adds the contract and `record`s its event in the same transaction. */
    async create(tenantId: string, employeeId: string, input: NewContract, record: RecordChange<ContractRecord>): Promise<ContractRecord> {
      try {
        return await db.$transaction(async (tx) => {
          const row = await tx.contract.create({
            data: {
              tenantId,
              employeeId,
              validFrom: dayToDate(input.validFrom),
              weeklyMinutes: input.weeklyMinutes,
              workingDays: [...input.workingDays],
              vacationDaysPerYear: input.vacationDaysPerYear,
              state: input.state,
              openingBalanceMinutes: input.openingBalanceMinutes,
              timeZone: input.timeZone,
            },
          });
          const created: ContractRecord = { ...input, workingDays: [...input.workingDays], id: row.id, employeeId, createdAt: row.createdAt };
          await record(tx, created);
          return created;
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) === 'contracts_tenant_id_employee_id_valid_from_key') throw new DuplicateContractError();
        throw error;
      }
    },
  };
}

export type ContractsRepository = ReturnType<typeof createContractsRepository>;
