import { rawSqlOverKysely } from '@msp/db';
import type { Db } from '../db';
import { deskEvents } from './desk-events';

/**
 * desk's event stream, over the transaction of the other repositories: a service records the event
 * of its change with `tx.events.record` (opening a ticket gives the tickets repository the event's
 * head instead, to write in the statement that inserts the ticket).
 */
export function createEventsRepository(db: Db) {
  // @msp/events speaks its raw-SQL surface; over the same transaction.
  const sql = rawSqlOverKysely(db);
  return {
    /**
     * Appends the event in this transaction, after the change it describes: both commit or neither
     * does. The type is held to the catalogue's names (a typo is a compile error, not a silent event).
     */
    record(event: Parameters<typeof deskEvents.record>[1]): Promise<void> {
      return deskEvents.record(sql, event);
    },
  };
}

export type EventsRepository = ReturnType<typeof createEventsRepository>;
