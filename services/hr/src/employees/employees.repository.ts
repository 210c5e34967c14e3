import { inListOrder, listCount, listPage, uniqueViolation } from '@msp/db';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import type { ExpressionBuilder, Selectable, SelectQueryBuilder } from 'kysely';
import { dateToDay } from '../calendar';
import { countOf, type Db } from '../db';
import type { Contract, DB, Employee } from '../generated/kysely/database';
import { toContract, type ContractRecord } from '../contracts/contracts.repository';

export interface EmployeeRecord {
  id: string;
  userId: string;
  personnelNumber: string;
  name: string;
  /** `YYYY-MM-DD`; null until set. */
  employmentStart: string | null;
  /** `YYYY-MM-DD`; null while employed. */
  employmentEnd: string | null;
  /** The contract valid today (UTC), or null. */
  currentContract: ContractRecord | null;
  /** ISO 8601, UTC. */
  createdAt: string;
  updatedAt: string;
}

export interface NewEmployee {
  userId: string;
  personnelNumber: string;
  name: string;
  employmentStart?: string | null;
  employmentEnd?: string | null;
}

export type EmployeeChanges = Partial<
  Pick<NewEmployee, 'personnelNumber' | 'name' | 'employmentStart' | 'employmentEnd'>
>;

export interface EmployeeFilter {
  userId?: string;
  personnelNumber?: string;
}

export type UniqueEmployeeField = 'userId' | 'personnelNumber';

/** Another employee of the tenant already has this user or personnel number. */
export class DuplicateEmployeeError extends Error {
  constructor(readonly field: UniqueEmployeeField) {
    super(`duplicate employee ${field}`);
    this.name = 'DuplicateEmployeeError';
  }
}

// Named in the migration by Prisma's convention for the two @@unique of the model.
const UNIQUE_KEYS: Record<string, UniqueEmployeeField> = {
  employees_tenant_id_user_id_key: 'userId',
  employees_tenant_id_personnel_number_key: 'personnelNumber',
};

/** A write refused by one of the unique keys is a DuplicateEmployeeError naming the field. */
async function unlessTaken<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    const field = UNIQUE_KEYS[uniqueViolation(error) ?? ''];
    throw field ? new DuplicateEmployeeError(field) : error;
  }
}

/** An employee and the columns of its current contract, under a `contract_` prefix so they keep their types. */
type EmployeeRow = Selectable<Employee> & {
  [K in keyof Selectable<Contract> as `contract_${K}`]: Selectable<Contract>[K] | null;
};

function toEmployee(row: EmployeeRow): EmployeeRecord {
  return {
    id: row.id,
    userId: row.user_id,
    personnelNumber: row.personnel_number,
    name: row.name,
    employmentStart: row.employment_start,
    employmentEnd: row.employment_end,
    currentContract: row.contract_id === null ? null : toContract(unprefixed(row)),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function unprefixed(row: EmployeeRow): Selectable<Contract> {
  return {
    id: row.contract_id!,
    tenant_id: row.contract_tenant_id!,
    employee_id: row.contract_employee_id!,
    valid_from: row.contract_valid_from!,
    weekly_minutes: row.contract_weekly_minutes!,
    working_days: row.contract_working_days!,
    vacation_days_per_year: row.contract_vacation_days_per_year!,
    state: row.contract_state!,
    opening_balance_minutes: row.contract_opening_balance_minutes,
    time_zone: row.contract_time_zone!,
    created_at: row.contract_created_at!,
  };
}

const LIST_ORDER = { columns: ['created_at', 'id'], direction: 'desc' } as const;

/** The tenant's employees that match the filter. */
const matching = (tenantId: string, filter: EmployeeFilter) => (eb: ExpressionBuilder<DB, 'employees'>) =>
  eb.and([
    eb('employees.tenant_id', '=', tenantId),
    ...(filter.userId === undefined ? [] : [eb('employees.user_id', '=', filter.userId)]),
    ...(filter.personnelNumber === undefined ? [] : [eb('employees.personnel_number', '=', filter.personnelNumber)]),
  ]);

/**
 * Each of `employees` with the contract valid on `today` (UTC), in the list's order. The employees
 * are selected first (a page stops at its LIMIT), then one index range of contracts per employee.
 */
function withCurrentContract(
  db: Db,
  employees: SelectQueryBuilder<DB, 'employees', Selectable<Employee>>,
  today = dateToDay(new Date()),
) {
  return db
    .selectFrom(employees.as('e'))
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('contracts as c')
          .selectAll('c')
          .whereRef('c.tenant_id', '=', 'e.tenant_id')
          .whereRef('c.employee_id', '=', 'e.id')
          .where('c.valid_from', '<=', today)
          .orderBy('c.valid_from', 'desc')
          .limit(1)
          .as('cc'),
      (join) => join.onTrue(),
    )
    .selectAll('e')
    .select([
      'cc.id as contract_id',
      'cc.tenant_id as contract_tenant_id',
      'cc.employee_id as contract_employee_id',
      'cc.valid_from as contract_valid_from',
      'cc.weekly_minutes as contract_weekly_minutes',
      'cc.working_days as contract_working_days',
      'cc.vacation_days_per_year as contract_vacation_days_per_year',
      'cc.state as contract_state',
      'cc.opening_balance_minutes as contract_opening_balance_minutes',
      'cc.time_zone as contract_time_zone',
      'cc.created_at as contract_created_at',
    ])
    .orderBy('e.created_at', 'desc')
    .orderBy('e.id', 'desc');
}

/**
 * Every query is bounded by the caller's tenant: another tenant's rows are simply not found.
 *
 * `reads` serves the list's page and total alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createEmployeesRepository(db: Db, reads: Db = db) {
  /** The employee as the API shows it, read through `on` (the database or a transaction). */
  async function findById(tenantId: string, id: string, on: Db = db): Promise<EmployeeRecord | null> {
    const row = await withCurrentContract(
      on,
      on.selectFrom('employees').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
    ).executeTakeFirst();
    return row ? toEmployee(row) : null;
  }

  return {
    /**
     * A page and the exact total; newest first, by number or after an employee (keyset: the list's
     * index from that employee on, at any depth). The total of the whole list is its list_counts
     * counter; `user_id` and `personnel_number` are each unique in the tenant, so a filtered total is
     * count(*) through that unique index: at most one row, whatever the tenant's size.
     */
    list(
      tenantId: string,
      filter: EmployeeFilter,
      window: ListWindow,
    ): Promise<{ items: EmployeeRecord[]; total: number }> {
      const filtered = filter.userId !== undefined || filter.personnelNumber !== undefined;
      return listPage({
        window,
        afterKey: async (id) => {
          const row = await reads
            .selectFrom('employees')
            .select(['created_at', 'id'])
            .where('id', '=', id)
            .where('tenant_id', '=', tenantId)
            .executeTakeFirst();
          return row && [row.created_at, row.id];
        },
        page: async (afterKey) => {
          const page = inListOrder(
            reads.selectFrom('employees').selectAll().where(matching(tenantId, filter)),
            LIST_ORDER,
            window,
            afterKey,
          );
          return (await withCurrentContract(reads, page).execute()).map(toEmployee);
        },
        total: async () =>
          filtered
            ? countOf(reads.selectFrom('employees').where(matching(tenantId, filter)))
            : listCount(reads, { tenantId, list: 'employees' }),
        unknownAfter: unknownAfterItem,
      });
    },

    /** Whether the helpdesk user is an employee of the tenant (timesheets and leaves are only for employees). */
    async isEmployee(tenantId: string, userId: string): Promise<boolean> {
      const row = await db
        .selectFrom('employees')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row !== undefined;
    },

    findById: (tenantId: string, id: string) => findById(tenantId, id),

    /** The employee that the request holding this Idempotency-Key claim created, whatever its tenant. */
    async findByIdempotencyClaim(claim: string): Promise<EmployeeRecord | null> {
      const row = await withCurrentContract(
        db,
        db.selectFrom('employees').selectAll().where('idempotency_claim', '=', claim),
      ).executeTakeFirst();
      return row ? toEmployee(row) : null;
    },

    /** The tenant's employee with this helpdesk user, from the primary (a write's checks read it). */
    async findByUserId(tenantId: string, userId: string): Promise<EmployeeRecord | null> {
      const row = await withCurrentContract(
        db,
        db.selectFrom('employees').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId),
      ).executeTakeFirst();
      return row ? toEmployee(row) : null;
    },

    /**
     * Writes, then reads the employee as the API shows it, in one transaction: a connection lost
     * after the write but before the read must not leave a stored employee behind a 503 (the
     * caller, told the write failed, would create it again).
     */
    /** `idempotencyClaim`: the Idempotency-Key claim of the request creating it, if any (findByIdempotencyClaim). */
    create(tenantId: string, input: NewEmployee, idempotencyClaim: string | null): Promise<EmployeeRecord> {
      return unlessTaken(
        db.transaction().execute(async (trx) => {
          const { id } = await trx
            .insertInto('employees')
            .values({
              tenant_id: tenantId,
              user_id: input.userId,
              personnel_number: input.personnelNumber,
              name: input.name,
              employment_start: input.employmentStart ?? null,
              employment_end: input.employmentEnd ?? null,
              idempotency_claim: idempotencyClaim,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          return (await findById(tenantId, id, trx))!;
        }),
      );
    },

    /** The changed employee, or null when the tenant has no employee with this id. */
    update(tenantId: string, id: string, changes: EmployeeChanges): Promise<EmployeeRecord | null> {
      return unlessTaken(
        db.transaction().execute(async (trx) => {
          const updated = await trx
            .updateTable('employees')
            .set({
              personnel_number: changes.personnelNumber,
              name: changes.name,
              employment_start: changes.employmentStart,
              employment_end: changes.employmentEnd,
              updated_at: new Date(),
            })
            .where('id', '=', id)
            .where('tenant_id', '=', tenantId)
            .returning('id')
            .executeTakeFirst();
          return updated ? findById(tenantId, id, trx) : null;
        }),
      );
    },
  };
}

export type EmployeesRepository = ReturnType<typeof createEmployeesRepository>;
