import type { Queryable } from '@msp/db';
import type { Db, DbTx } from './db';
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
 * The helpdesk's repositories over the database or one transaction. `connection` (the database's
 * pool, never inside a Prisma transaction) lets the hottest reads skip Prisma; inside a
 * transaction they go through it. `reads` (the read replica's pool, never inside a transaction)
 * serves the list pages and their totals, which tolerate the replica's lag.
 */
function repositories(db: DbTx, connection?: Queryable, reads?: Queryable) {
  return {
    tickets: createTicketsRepository(db, connection, reads),
    comments: createCommentsRepository(db, reads),
    clients: createClientsRepository(db, connection, reads),
    contacts: createContactsRepository(db, connection),
    mailboxes: createMailboxesRepository(db),
    attachments: createAttachmentsRepository(db),
    users: createUsersRepository(db, connection, reads),
    timeEntries: createTimeEntriesRepository(db, connection, reads),
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

export function createStore(db: Db): Store {
  return {
    ...repositories(db, db.pool, db.readPool === db.pool ? undefined : db.readPool),
    transaction: (work) => db.$transaction((tx) => work(repositories(tx))),
  };
}
