import { rawSqlOver, sqlTransaction, type Queryable } from '@msp/db';
import type { Db, DbTx } from './db';
import { createClientsRepository, type ClientsRepository } from './clients/clients.repository';
import { createCommentsRepository } from './comments/comments.repository';
import { createEventsRepository, type EventsRepository } from './events/events.repository';
import { createTicketsRepository, type TicketsRepository } from './tickets/tickets.repository';
import { createUsersRepository, type UsersRepository } from './users/users.repository';

/**
 * The helpdesk's repositories over the database or one transaction. `connection` (the database's
 * pool, never inside a Prisma transaction) lets the hottest reads skip Prisma; inside a
 * transaction they go through it.
 */
function repositories(db: DbTx, connection?: Queryable) {
  return {
    tickets: createTicketsRepository(db, connection),
    comments: createCommentsRepository(db),
    clients: createClientsRepository(db, connection),
    users: createUsersRepository(db, connection),
    events: createEventsRepository(db),
  };
}

export type Repositories = ReturnType<typeof repositories>;

/**
 * What a plain-SQL transaction (sqlTransaction) offers: only repository methods written in SQL,
 * which run on its connection. A Prisma call would run outside the transaction, so none is
 * reachable from here; a method added to this list must be SQL on the repository's connection.
 */
export interface SqlRepositories {
  tickets: Pick<TicketsRepository, 'create'>;
  clients: Pick<ClientsRepository, 'exists'>;
  users: Pick<UsersRepository, 'isActiveLocked'>;
  events: EventsRepository;
}

/**
 * Outside a transaction the store has no `events`: an event is recorded only in the transaction of
 * the change it describes, so that a rolled-back change never has one. Nor `users.isActiveLocked`:
 * its share lock lasts as long as the transaction it runs in, so outside one it would lock nothing.
 */
export interface Store extends Omit<Repositories, 'events' | 'users'> {
  users: Omit<UsersRepository, 'isActiveLocked'>;
  /** Runs `work` in one transaction: everything it wrote commits together or not at all. */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>;
  /**
   * The same for a hot write made only of SQL statements (creating a ticket): one transaction on a
   * connection of the pool, without Prisma's transaction manager and query engine (a third of that
   * write's CPU, bench/README.md).
   */
  sqlTransaction<T>(work: (tx: SqlRepositories) => Promise<T>): Promise<T>;
}

export function createStore(db: Db): Store {
  return {
    ...repositories(db, db.pool),
    transaction: (work) => db.$transaction((tx) => work(repositories(tx))),
    sqlTransaction: (work) =>
      sqlTransaction(db.pool, (connection) =>
        work({
          tickets: createTicketsRepository(db, connection),
          clients: createClientsRepository(db, connection),
          users: createUsersRepository(db, connection),
          events: createEventsRepository(rawSqlOver(connection)),
        }),
      ),
  };
}
