import type { Readable, Transform } from 'node:stream';
import { localDateOf } from '@msp/calendar';
import { createCsvStream } from '@msp/csv';
import { notFound, unprocessable, validationFailed, type PageRequest } from '@msp/http';
import type { Repositories, Store } from '../store';
import { ticketNotFound } from '../tickets/tickets.service';
import type { NewTimeEntry, TimeEntry, TimeEntryChanges, TimeEntryFilters } from './time-entry.schemas';
import type { TimeEntryWrite } from './time-entries.repository';
import type { TimeExportRepository, TimeExportRow } from './time-export.repository';

export const timeEntryNotFound = () => notFound('No time entry with this id exists in your tenant.');

/** The columns of the time export, in order (the header row). */
export const TIME_EXPORT_COLUMNS = [
  'client_id',
  'client_name',
  'ticket_number',
  'ticket_title',
  'user_id',
  'user_name',
  'billable_minutes',
  'hours',
  'currency',
  'hourly_rate',
  'amount',
] as const;

export interface TimeExportFile {
  contentType: string;
  filename: string;
  /** The rows as the database produces them. */
  rows: Readable;
  /** Turns them into the file's bytes. */
  writer: Transform;
}

/** user_id must name an active user of the tenant, share-locked so a deactivation cannot slip in before the commit (else 422). */
async function assertActiveUser(tx: Pick<Repositories, 'users'>, tenantId: string, userId: string) {
  if (!(await tx.users.isActiveLocked(tenantId, userId))) {
    const message = 'does not name an active user of your tenant';
    throw unprocessable(`user_id ${message}.`, { code: 'unknown-reference', errors: [{ field: 'user_id', message }] });
  }
}

/** The API's name of each changeable field, and the repository's. */
const CHANGEABLE = {
  user_id: 'userId',
  minutes: 'minutes',
  date: 'date',
  billable: 'billable',
  note: 'note',
  hourly_rate: 'hourlyRate',
} as const satisfies Record<keyof TimeEntryChanges, keyof TimeEntryWrite>;

/** The fields of `changes` that differ from the entry, in the repository's terms. */
function differences(entry: TimeEntry, changes: TimeEntryChanges): TimeEntryWrite {
  const diff: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(CHANGEABLE) as [keyof TimeEntryChanges, keyof TimeEntryWrite][]) {
    const value = changes[field];
    if (value !== undefined && value !== entry[field]) diff[column] = value;
  }
  return diff as TimeEntryWrite;
}

export interface TimeEntriesOptions {
  /** The IANA zone whose calendar days entries are dated in (DEFAULT_TIME_ZONE) until tenants have calendars of their own. */
  timeZone: string;
  /** The clock (tests). */
  now?: () => number;
}

export function createTimeEntriesService(store: Store, timeExport: TimeExportRepository, options: TimeEntriesOptions) {
  const now = options.now ?? Date.now;

  return {
    async listForTicket(tenantId: string, ticketId: string, page: PageRequest) {
      if (!(await store.tickets.findById(tenantId, ticketId))) throw ticketNotFound();
      return store.timeEntries.listForTicket(tenantId, ticketId, page);
    },

    list(tenantId: string, filters: TimeEntryFilters, page: PageRequest) {
      if (filters.from !== undefined && filters.to !== undefined && filters.to < filters.from) {
        throw validationFailed(
          [{ field: 'to', message: `must not be before from (${filters.from})` }],
          'One or more query parameters are not valid.',
        );
      }
      return store.timeEntries.list(tenantId, filters, page);
    },

    async get(tenantId: string, id: string): Promise<TimeEntry> {
      const entry = await store.timeEntries.findById(tenantId, id);
      if (!entry) throw timeEntryNotFound();
      return entry;
    },

    /**
     * Records time on a ticket of the tenant for an active user. The ticket stays locked until the
     * entry commits, so the client copied from it cannot change in between; the date defaults to
     * today in the tenant's calendar zone. The entry is priced now: its own `hourly_rate` if given
     * (null: none), else its client's, in its client's currency.
     */
    create(tenantId: string, ticketId: string, input: NewTimeEntry): Promise<TimeEntry> {
      return store.transaction(async (tx) => {
        const ticket = await tx.tickets.findForUpdate(tenantId, ticketId);
        if (!ticket) throw ticketNotFound();
        await assertActiveUser(tx, tenantId, input.user_id);
        const client = (await tx.clients.findById(tenantId, ticket.client_id))!; // the ticket's client, which the ticket's lock holds
        const entry = await tx.timeEntries.create(tenantId, {
          ticketId,
          clientId: ticket.client_id,
          userId: input.user_id,
          minutes: input.minutes,
          date: input.date ?? localDateOf(options.timeZone, now()),
          billable: input.billable ?? true,
          note: input.note ?? null,
          hourlyRate: input.hourly_rate === undefined ? client.hourly_rate : input.hourly_rate,
          currency: client.currency,
        });
        await tx.events.record({
          type: 'time_entry.created',
          tenantId,
          resourceType: 'time_entry',
          resourceId: entry.id,
          object: entry,
        });
        return entry;
      });
    },

    /**
     * Applies the changes that differ from the stored entry; asking for what it already is changes
     * nothing, not even `updated_at`. A new user_id must be an active user; the user an entry
     * already has stays even after being deactivated.
     */
    update(tenantId: string, id: string, changes: TimeEntryChanges): Promise<TimeEntry> {
      return store.transaction(async (tx) => {
        const entry = await tx.timeEntries.findForUpdate(tenantId, id);
        if (!entry) throw timeEntryNotFound();
        const diff = differences(entry, changes);
        if (Object.keys(diff).length === 0) return entry;
        if (diff.userId !== undefined) await assertActiveUser(tx, tenantId, diff.userId);
        const updated = await tx.timeEntries.update(tenantId, id, diff);
        await tx.events.record({
          type: 'time_entry.updated',
          tenantId,
          resourceType: 'time_entry',
          resourceId: id,
          object: updated,
          before: entry,
        });
        return updated;
      });
    },

    /** Deletes the entry; time_entry.deleted carries it as it was. */
    remove(tenantId: string, id: string): Promise<void> {
      return store.transaction(async (tx) => {
        const entry = await tx.timeEntries.findForUpdate(tenantId, id);
        if (!entry) throw timeEntryNotFound();
        await tx.timeEntries.remove(tenantId, id);
        await tx.events.record({
          type: 'time_entry.deleted',
          tenantId,
          resourceType: 'time_entry',
          resourceId: id,
          object: entry,
        });
      });
    },

    /**
     * The month's billable time as CSV; `signal`: the caller went away, a query still on its way to
     * the first row is cancelled. Everything that can fail is made before the cursor opens, so that
     * nothing can leave an open cursor behind; from then on the caller owns it (sendStreamedFile
     * destroys every stage on every path).
     */
    async openExport(tenantId: string, period: string, signal?: AbortSignal): Promise<TimeExportFile> {
      const writer = createCsvStream<TimeExportRow>({
        columns: TIME_EXPORT_COLUMNS,
        cells: (row) => TIME_EXPORT_COLUMNS.map((column) => row[column]),
      });
      const file = { contentType: 'text/csv; charset=utf-8', filename: `time-${period}.csv`, writer };
      return { ...file, rows: await timeExport.rows(tenantId, period, signal) };
    },
  };
}

export type TimeEntriesService = ReturnType<typeof createTimeEntriesService>;
