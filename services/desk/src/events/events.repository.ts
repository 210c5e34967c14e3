import type { DbTx } from '../db';
import { deskEvents } from './desk-events';

/** desk's event stream, over the connection or transaction of the other repositories. */
export function createEventsRepository(db: DbTx) {
  return {
    /**
     * Appends the event in this transaction, after the change it describes: both commit or neither
     * does. The type is held to the catalogue's names (a typo is a compile error, not a silent event).
     */
    record(event: Parameters<typeof deskEvents.record>[1]): Promise<void> {
      return deskEvents.record(db, event);
    },
  };
}

export type EventsRepository = ReturnType<typeof createEventsRepository>;
