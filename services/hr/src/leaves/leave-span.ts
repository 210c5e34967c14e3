// How long a leave may be. The longest absence the law gives is parental leave (Elternzeit, §15 (2)
// BEEG): up to a child's third birthday, three years. A leave's working days are stored one row
// each and counted against the accounts of every year it touches, so a longer span (a century by
// mistake) is refused with a 422 naming the last day it may end on, not written.
import { addDays, isDateString } from '@msp/calendar';
import { dayOfYear } from '../calendar';

export const MAX_LEAVE_YEARS = 3;

/** The last day a leave from `start` may end on: the day before the same day MAX_LEAVE_YEARS later (from 29 February: 28 February). */
export function latestEndDate(start: string): string {
  const year = Number(start.slice(0, 4)) + MAX_LEAVE_YEARS;
  const sameDay = dayOfYear(year, start.slice(5));
  // 29 February of a common year: the span ends with February (§188 (3) BGB).
  return isDateString(sameDay) ? addDays(sameDay, -1) : dayOfYear(year, '02-28');
}
