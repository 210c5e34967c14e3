import { pageWithTotal, sqlRows } from '@msp/db';
import { isRecordNotFound, violatedUniqueConstraint, type Db } from '../db';
import { Prisma } from '../generated/prisma/client';

export interface EmployeeRecord {
  id: string;
  userId: string;
  personnelNumber: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewEmployee {
  userId: string;
  personnelNumber: string;
  name: string;
}

export type EmployeeChanges = Partial<Pick<NewEmployee, 'personnelNumber' | 'name'>>;

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

const columns = { id: true, userId: true, personnelNumber: true, name: true, createdAt: true, updatedAt: true } as const;

/*
 * The list and the single read are plain SQL on the pool under Prisma (sqlRows of @msp/db): a
 * batch of findMany and count in a Prisma transaction cost several times the CPU of the same
 * SELECTs through pg (bench/README.md, issue 12). Writes keep the model API.
 */
const EMPLOYEE_COLUMNS = Prisma.sql`id, user_id, personnel_number, name, created_at, updated_at`;

interface EmployeeSqlRow {
  id: string;
  user_id: string;
  personnel_number: string;
  name: string;
  created_at: string | Date;
  updated_at: string | Date;
}

function fromSql(row: EmployeeSqlRow): EmployeeRecord {
  return { id: row.id, userId: row.user_id, personnelNumber: row.personnel_number, name: row.name, createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at) };
}

function translated(error: unknown): unknown {
  const field = UNIQUE_KEYS[violatedUniqueConstraint(error) ?? ''];
  return field ? new DuplicateEmployeeError(field) : error;
}

/** Every query is bounded by the caller's tenant: another tenant's rows are simply not found. */
export function createEmployeesRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  return {
    /** A page and the total in one round trip (pageWithTotal); newest first. */
    async list(tenantId: string, filter: EmployeeFilter, window: { skip: number; take: number }): Promise<{ items: EmployeeRecord[]; total: number }> {
      const where = Prisma.join(
        [
          Prisma.sql`tenant_id = ${tenantId}::uuid`,
          ...(filter.userId === undefined ? [] : [Prisma.sql`user_id = ${filter.userId}::uuid`]),
          ...(filter.personnelNumber === undefined ? [] : [Prisma.sql`personnel_number = ${filter.personnelNumber}`]),
        ],
        ' AND ',
      );
      const { items, total } = await pageWithTotal<EmployeeSqlRow>(
        rows,
        Prisma.sql`SELECT ${EMPLOYEE_COLUMNS} FROM employees WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${window.take} OFFSET ${window.skip}`,
        Prisma.sql`SELECT count(*) FROM employees WHERE ${where}`,
      );
      return { items: items.map(fromSql), total };
    },

    /** Whether the helpdesk user is an employee of the tenant (timesheets and leaves are only for employees). */
    async isEmployee(tenantId: string, userId: string): Promise<boolean> {
      return (await db.employee.count({ where: { tenantId, userId } })) > 0;
    },

    async findById(tenantId: string, id: string): Promise<EmployeeRecord | null> {
      const [row] = await rows<EmployeeSqlRow>(Prisma.sql`SELECT ${EMPLOYEE_COLUMNS} FROM employees WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid`);
      return row ? fromSql(row) : null;
    },

    async create(tenantId: string, input: NewEmployee): Promise<EmployeeRecord> {
      try {
        return await db.employee.create({ data: { tenantId, ...input }, select: columns });
      } catch (error) {
        throw translated(error);
      }
    },

    /** The changed employee, or null when the tenant has no employee with this id. */
    async update(tenantId: string, id: string, changes: EmployeeChanges): Promise<EmployeeRecord | null> {
      try {
        return await db.employee.update({ where: { id, tenantId }, data: changes, select: columns });
      } catch (error) {
        if (isRecordNotFound(error)) return null;
        throw translated(error);
      }
    },
  };
}

export type EmployeesRepository = ReturnType<typeof createEmployeesRepository>;
