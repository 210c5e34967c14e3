import { recordEvent, type EventToRecord } from '@msp/events';
import type { DbTx } from '../db';
import type { DeskEventType } from './desk-events';

/** desk's event stream, over the connection or transaction of the other repositories. */
export function createEventsRepository(db: DbTx) {
  return {
    /**
     * Appends the event in this transaction, after the change it describes: both commit or neither
     * does. The type is held to the catalogue's names (a typo is a compile error, not a silent event).
     */
    record(event: EventToRecord & { type: DeskEventType }): Promise<void> {
      return recordEvent(db, event);
    },
  };
}

export type EventsRepository = ReturnType<typeof createEventsRepository>;
