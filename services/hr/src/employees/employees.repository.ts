import { listCountSql, sqlRows, type KeysetOrder } from '@msp/db';
import type { ListWindow } from '@msp/http';
import { isRecordNotFound, violatedUniqueConstraint, type Db } from '../db';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../list-pages';
import { dateToDay, dayToDate } from '../calendar';
import { CONTRACT_COLUMNS, contractFromSql, type ContractRecord, type ContractSqlRow } from '../contracts/contracts.repository';

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
  createdAt: Date;
  updatedAt: Date;
}

export interface NewEmployee {
  userId: string;
  personnelNumber: string;
  name: string;
  employmentStart?: string | null;
  employmentEnd?: string | null;
}

export type EmployeeChanges = Partial<Pick<NewEmployee, 'personnelNumber' | 'name' | 'employmentStart' | 'employmentEnd'>>;

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

const columns = { id: true } as const;

/** The Prisma model's data of the fields given (dates as Prisma holds a `date`). */
function dataOf(input: EmployeeChanges) {
  const day = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : dayToDate(value));
  return { personnelNumber: input.personnelNumber, name: input.name, employmentStart: day(input.employmentStart), employmentEnd: day(input.employmentEnd) };
}

/*
 * The list and the single read are plain SQL on the pool under Prisma (sqlRows of @msp/db): a
 * batch of findMany and count in a Prisma transaction cost several times the CPU of the same
 * SELECTs through pg (bench/README.md, issue 12). Writes keep the model API.
 */
const EMPLOYEE_COLUMNS = Prisma.sql`id, user_id, personnel_number, name, to_char(employment_start, 'YYYY-MM-DD') AS employment_start,
  to_char(employment_end, 'YYYY-MM-DD') AS employment_end, created_at, updated_at`;

/** Each employee with the contract valid on the day given (one index range per employee). */
const withCurrentContract = (employees: Prisma.Sql, today: string) => Prisma.sql`SELECT e.*, to_jsonb(cc) AS current_contract FROM (${employees}) e
  LEFT JOIN LATERAL (SELECT ${CONTRACT_COLUMNS} FROM contracts c
    WHERE c.tenant_id = e.tenant_id AND c.employee_id = e.id AND c.valid_from <= ${today}::date ORDER BY c.valid_from DESC LIMIT 1) cc ON true
  ORDER BY e.created_at DESC, e.id DESC`;

const todayUtc = () => dateToDay(new Date());

interface EmployeeSqlRow {
  id: string;
  user_id: string;
  personnel_number: string;
  name: string;
  employment_start: string | null;
  employment_end: string | null;
  current_contract: ContractSqlRow | null;
  created_at: string | Date;
  updated_at: string | Date;
}

function fromSql(row: EmployeeSqlRow): EmployeeRecord {
  return {
    id: row.id,
    userId: row.user_id,
    personnelNumber: row.personnel_number,
    name: row.name,
    employmentStart: row.employment_start,
    employmentEnd: row.employment_end,
    currentContract: row.current_contract ? contractFromSql(row.current_contract) : null,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function translated(error: unknown): unknown {
  const field = UNIQUE_KEYS[violatedUniqueConstraint(error) ?? ''];
  return field ? new DuplicateEmployeeError(field) : error;
}

/** Every query is bounded by the caller's tenant: another tenant's rows are simply not found. */
export function createEmployeesRepository(db: Db) {
  const rows = sqlRows(db, db.pool);

  const byId = (tenantId: string, id: string) =>
    withCurrentContract(Prisma.sql`SELECT ${EMPLOYEE_COLUMNS}, tenant_id FROM employees WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid`, todayUtc());

  async function findById(tenantId: string, id: string): Promise<EmployeeRecord | null> {
    const [row] = await rows<EmployeeSqlRow>(byId(tenantId, id));
    return row ? fromSql(row) : null;
  }

  /**
   * Writes, then reads the employee as the API shows it, in one transaction: a connection lost
   * after the write but before the read must not leave a stored employee behind a 503 (the
   * caller, told the write failed, would create it again).
   */
  async function writeThenRead(write: (tx: Prisma.TransactionClient) => Promise<{ id: string }>, tenantId: string): Promise<EmployeeRecord> {
    return db.$transaction(async (tx) => {
      const { id } = await write(tx);
      const [row] = await sqlRows(tx)<EmployeeSqlRow>(byId(tenantId, id));
      return fromSql(row!);
    });
  }

  return {
    /**
     * A page and the exact total in one round trip (keysetPage); newest first, by number or after an
     * employee (keyset: the list's index from that employee on, at any depth). The total of the whole
     * list is its list_counts counter; `user_id` and `personnel_number` are each unique in the
     * tenant, so a filtered total is count(*) through that unique index: at most one row, whatever
     * the tenant's size.
     */
    async list(tenantId: string, filter: EmployeeFilter, window: ListWindow): Promise<{ items: EmployeeRecord[]; total: number }> {
      const filters = [
        ...(filter.userId === undefined ? [] : [Prisma.sql`user_id = ${filter.userId}::uuid`]),
        ...(filter.personnelNumber === undefined ? [] : [Prisma.sql`personnel_number = ${filter.personnelNumber}`]),
      ];
      const where = Prisma.join([Prisma.sql`tenant_id = ${tenantId}::uuid`, ...filters], ' AND ');
      const order: KeysetOrder<Prisma.Sql> = { table: 'employees', columns: ['created_at', 'id'], direction: 'desc', scope: Prisma.sql`k.tenant_id = ${tenantId}::uuid` };
      const { items, total } = await lists.keysetPage<EmployeeSqlRow>(
        rows,
        window,
        {
          page: withCurrentContract(
            Prisma.sql`SELECT ${EMPLOYEE_COLUMNS}, tenant_id FROM employees WHERE ${where}${lists.keysetAfter(window, order)} ${lists.keysetOrderLimit(window, order)}`,
            todayUtc(),
          ),
          total: filters.length === 0 ? listCountSql(tenantId, 'employees') : Prisma.sql`SELECT count(*) FROM employees WHERE ${where}`,
          exists: lists.afterExists(window, order),
        },
      );
      return { items: items.map(fromSql), total };
    },

    /** Whether the helpdesk user is an employee of the tenant (timesheets and leaves are only for employees). */
    async isEmployee(tenantId: string, userId: string): Promise<boolean> {
      return (await db.employee.count({ where: { tenantId, userId } })) > 0;
    },

    findById,

    async create(tenantId: string, input: NewEmployee): Promise<EmployeeRecord> {
      try {
        return await writeThenRead((tx) => tx.employee.create({ data: { tenantId, userId: input.userId, ...dataOf(input) } as Prisma.EmployeeUncheckedCreateInput, select: columns }), tenantId);
      } catch (error) {
        throw translated(error);
      }
    },

    /** The changed employee, or null when the tenant has no employee with this id. */
    async update(tenantId: string, id: string, changes: EmployeeChanges): Promise<EmployeeRecord | null> {
      try {
        return await writeThenRead((tx) => tx.employee.update({ where: { id, tenantId }, data: dataOf(changes), select: columns }), tenantId);
      } catch (error) {
        if (isRecordNotFound(error)) return null;
        throw translated(error);
      }
    },
  };
}

export type EmployeesRepository = ReturnType<typeof createEmployeesRepository>;
