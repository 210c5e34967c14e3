import type { Db, DeskDatabase } from './db';
import { createAttachmentsRepository } from './attachments/attachments.repository';
import { createCalendarsRepository } from './calendars/calendars.repository';
import { createClientsRepository } from './clients/clients.repository';
import { createContactsRepository } from './contacts/contacts.repository';
import { createMailboxesRepository } from './mailboxes/mailboxes.repository';
import { createCommentsRepository } from './comments/comments.repository';
import { createEventsRepository } from './events/events.repository';
import { createSlaPoliciesRepository } from './sla-policies/sla-policies.repository';
import { createTicketSlasRepository } from './sla/ticket-slas.repository';
import { createTicketsRepository } from './tickets/tickets.repository';
import { createTimeEntriesRepository } from './time-entries/time-entries.repository';
import { createUsersRepository, type UsersRepository } from './users/users.repository';

/**
 * The helpdesk's repositories over the database or one transaction of it (the same Kysely type).
 * `reads` (the read replica with DATABASE_READ_URL, else `db` itself; never inside a transaction)
 * serves the list pages and their totals, which tolerate the replica's lag.
 */
function repositories(db: Db, reads: Db = db) {
  return {
    tickets: createTicketsRepository(db, reads),
    comments: createCommentsRepository(db, reads),
    clients: createClientsRepository(db, reads),
    contacts: createContactsRepository(db, reads),
    mailboxes: createMailboxesRepository(db),
    attachments: createAttachmentsRepository(db, reads),
    users: createUsersRepository(db, reads),
    timeEntries: createTimeEntriesRepository(db, reads),
    events: createEventsRepository(db),
    calendars: createCalendarsRepository(db, reads),
    slaPolicies: createSlaPoliciesRepository(db, reads),
    ticketSlas: createTicketSlasRepository(db),
  };
}

export type Repositories = ReturnType<typeof repositories>;

/**
 * Outside a transaction the store has no `events`: an event is recorded only in the transaction of
 * the change it describes, so that a rolled-back change never has one. Nor `users.isActiveLocked`:
 * its share lock lasts as long as the transaction it runs in, so outside one it would lock nothing.
 */
export interface Store extends Omit<Repositories, 'events' | 'users'> {
  users: Omit<UsersRepository, 'isActiveLocked'>;
  /** Runs `work` in one transaction: everything it wrote commits together or not at all. */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>;
}

export function createStore({ db, reads }: Pick<DeskDatabase, 'db' | 'reads'>): Store {
  return {
    ...repositories(db, reads),
    transaction: (work) => db.transaction().execute((tx) => work(repositories(tx))),
  };
}
