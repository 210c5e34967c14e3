import type { PageRequest } from '@msp/http';
import { pageWindow } from '@msp/http';
import type { DbTx } from '../db';
import type { Prisma, Ticket as TicketRow } from '../generated/prisma/client';
import type { Ticket, TicketFilters } from './ticket.schemas';
import { WORKING_STATUSES, type StatusTimestamps, type TicketStatus } from './ticket-status';

/** The stored ticket in the API's shape: the one place rows become responses. */
function toTicket(row: TicketRow): Ticket {
  return {
    id: row.id,
    number: row.number,
    title: row.title,
    description: row.description,
    priority: row.priority,
    category: row.category,
    status: row.status,
    client_id: row.clientId,
    assignee_id: row.assigneeId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    resolved_at: row.resolvedAt?.toISOString() ?? null,
    closed_at: row.closedAt?.toISOString() ?? null,
  };
}

const FILTER_COLUMNS = {
  status: 'status',
  priority: 'priority',
  category: 'category',
  client_id: 'clientId',
  assignee_id: 'assigneeId',
} as const satisfies Record<keyof TicketFilters, keyof Prisma.TicketWhereInput>;

/** Newest first; the id breaks ties between tickets created in the same millisecond. */
const LIST_ORDER: Prisma.TicketOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];

export interface TicketWrite {
  title?: string;
  description?: string;
  priority?: Ticket['priority'];
  category?: Ticket['category'];
  status?: TicketStatus;
  clientId?: string;
  assigneeId?: string | null;
}

export function createTicketsRepository(db: DbTx) {
  /**
   * A list's total. ticket_counts (kept by triggers) answers the unfiltered list and every single
   * filter with one row; only combined filters count matching rows.
   */
  async function count(tenantId: string, filters: [keyof TicketFilters, string][], where: Prisma.TicketWhereInput): Promise<number> {
    if (filters.length > 1) return db.ticket.count({ where });
    const [dimension, value] = filters[0] ?? ['all', ''];
    const row = await db.ticketCount.findUnique({ where: { tenantId_dimension_value: { tenantId, dimension, value } }, select: { count: true } });
    return Number(row?.count ?? 0);
  }

  async function findById(tenantId: string, id: string): Promise<Ticket | null> {
    const row = await db.ticket.findFirst({ where: { id, tenantId } });
    return row && toTicket(row);
  }

  return {
    findById,

    async list(tenantId: string, filters: TicketFilters, page: PageRequest): Promise<{ items: Ticket[]; total: number }> {
      const active = Object.entries(filters).filter(([key, value]) => key in FILTER_COLUMNS && value !== undefined) as [keyof TicketFilters, string][];
      const where: Prisma.TicketWhereInput = { tenantId };
      for (const [key, value] of active) Object.assign(where, { [FILTER_COLUMNS[key]]: value });
      const [rows, total] = await Promise.all([db.ticket.findMany({ where, orderBy: LIST_ORDER, ...pageWindow(page) }), count(tenantId, active, where)]);
      return { items: rows.map(toTicket), total };
    },

    /** Reads the ticket and locks it until the transaction ends, so changes to one ticket queue. */
    async findForUpdate(tenantId: string, id: string): Promise<Ticket | null> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM tickets WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      return locked.length ? findById(tenantId, id) : null;
    },

    /** Draws the tenant's next number and inserts the ticket; run it inside a transaction. */
    async create(tenantId: string, ticket: TicketWrite & { title: string; clientId: string }): Promise<Ticket> {
      const [sequence] = await db.$queryRaw<{ last_number: number }[]>`
        INSERT INTO ticket_sequences (tenant_id, last_number) VALUES (${tenantId}::uuid, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_sequences.last_number + 1
        RETURNING last_number`;
      const row = await db.ticket.create({ data: { ...ticket, tenantId, number: sequence!.last_number } });
      return toTicket(row);
    },

    /** `at` becomes updated_at, the same instant the status timestamps were taken from. */
    async update(tenantId: string, id: string, changes: TicketWrite & StatusTimestamps, at: Date): Promise<Ticket> {
      const row = await db.ticket.update({ where: { id, tenantId }, data: { ...changes, updatedAt: at } });
      return toTicket(row);
    },

    /**
     * Unassigns the user's tickets that are still being worked on; resolved and closed ones keep
     * their history. Answers the tickets it unassigned, as they are now.
     */
    async unassignOpen(tenantId: string, assigneeId: string): Promise<Ticket[]> {
      const rows = await db.ticket.updateManyAndReturn({
        where: { tenantId, assigneeId, status: { in: [...WORKING_STATUSES] } },
        data: { assigneeId: null },
      });
      return rows.map(toTicket);
    },
  };
}

export type TicketsRepository = ReturnType<typeof createTicketsRepository>;
