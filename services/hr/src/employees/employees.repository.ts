import { isRecordNotFound, violatedUniqueConstraint, type Db } from '../db';

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

function translated(error: unknown): unknown {
  const field = UNIQUE_KEYS[violatedUniqueConstraint(error) ?? ''];
  return field ? new DuplicateEmployeeError(field) : error;
}

/** Every query is bounded by the caller's tenant: another tenant's rows are simply not found. */
export function createEmployeesRepository(db: Db) {
  return {
    async list(tenantId: string, filter: EmployeeFilter, window: { skip: number; take: number }): Promise<{ items: EmployeeRecord[]; total: number }> {
      const where = { tenantId, userId: filter.userId, personnelNumber: filter.personnelNumber };
      const [items, total] = await db.$transaction([
        db.employee.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: columns, ...window }),
        db.employee.count({ where }),
      ]);
      return { items, total };
    },

    /** Whether the helpdesk user is an employee of the tenant (timesheets and leaves are only for employees). */
    async isEmployee(tenantId: string, userId: string): Promise<boolean> {
      return (await db.employee.count({ where: { tenantId, userId } })) > 0;
    },

    findById(tenantId: string, id: string): Promise<EmployeeRecord | null> {
      return db.employee.findFirst({ where: { id, tenantId }, select: columns });
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
