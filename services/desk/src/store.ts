import type { Pool } from 'pg';
import type { Db, DbTx } from './db';
import { createClientsRepository } from './clients/clients.repository';
import { createCommentsRepository } from './comments/comments.repository';
import { createEventsRepository } from './events/events.repository';
import { createTicketsRepository } from './tickets/tickets.repository';
import { createUsersRepository } from './users/users.repository';

/**
 * The helpdesk's repositories over the database or one transaction. `pool` (the database's, never a
 * transaction's) lets the hottest reads skip Prisma; inside a transaction they go through it.
 */
function repositories(db: DbTx, pool?: Pool) {
  return {
    tickets: createTicketsRepository(db, pool),
    comments: createCommentsRepository(db),
    clients: createClientsRepository(db),
    users: createUsersRepository(db),
    events: createEventsRepository(db),
  };
}

export type Repositories = ReturnType<typeof repositories>;

/**
 * Outside a transaction the store has no `events`: an event is recorded only in the transaction of
 * the change it describes, so that a rolled-back change never has one.
 */
export interface Store extends Omit<Repositories, 'events'> {
  /** Runs `work` in one transaction: everything it wrote commits together or not at all. */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>;
}

export function createStore(db: Db): Store {
  return { ...repositories(db, db.pool), transaction: (work) => db.$transaction((tx) => work(repositories(tx))) };
}
