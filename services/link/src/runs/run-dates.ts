import { unprocessable } from '@msp/http';

/**
 * How far from today (UTC) the day a run is planned for (a start date, a last day, an effective
 * date) may lie. Beyond it the day is a typo rather than a plan: a run would hold its person's open
 * slot for decades, and its later steps (a last day plus the mailbox retention) would fall past
 * the year 9999, which no date-time of the API can express.
 */
export const RUN_DATE_YEARS_BACK = 10;
export const RUN_DATE_YEARS_AHEAD = 5;

/** The sentence every such date's OpenAPI description carries. */
export const RUN_DATE_BOUNDS_TEXT =
  `At most ${RUN_DATE_YEARS_BACK} years before and ${RUN_DATE_YEARS_AHEAD} years ` +
  'after today (UTC); a day outside is a 422 naming both limits.';

const dateOnly = (date: Date) => date.toISOString().slice(0, 10);

/** The first and last day a run may be planned for, as of `now`. */
export function runDateWindow(now: Date): { earliest: string; latest: string } {
  const shifted = (years: number) =>
    dateOnly(new Date(Date.UTC(now.getUTCFullYear() + years, now.getUTCMonth(), now.getUTCDate())));
  return { earliest: shifted(-RUN_DATE_YEARS_BACK), latest: shifted(RUN_DATE_YEARS_AHEAD) };
}

/** The start (midnight UTC) of a `YYYY-MM-DD` day, when a run's steps planned for that day are due. */
export const startOfDay = (day: string): Date => new Date(`${day}T00:00:00Z`);

/** A request's `YYYY-MM-DD` field as stored (a date column is its text), or a 422 naming the window when it lies outside. */
export function runDate(field: string, value: string, now: Date): string {
  const { earliest, latest } = runDateWindow(now);
  // Both sides are YYYY-MM-DD with four-digit years (the schema's date format): they compare as text.
  if (value < earliest || value > latest) {
    throw unprocessable(
      `${field} ${value} lies outside the days a run may be planned for: ${earliest} to ${latest} ` +
        `(${RUN_DATE_YEARS_BACK} years back to ${RUN_DATE_YEARS_AHEAD} years ahead of today, UTC).`,
      {
        errors: [{ field, message: `must be between ${earliest} and ${latest}` }],
        extensions: { earliest, latest },
      },
    );
  }
  return value;
}
