/**
 * When a failed delivery is tried again, after its 1st, 2nd, … failed attempt (each ± 20 %, see
 * nextDelay): the first retry within 10 seconds, then backing off to about a day in all (23 h 36 min over 10 attempts). After
 * the last one the delivery is `failed`; it can still be retried by hand.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  5_000, // 5 s
  15_000, // 15 s
  60_000, // 1 min
  5 * 60_000, // 5 min
  30 * 60_000, // 30 min
  2 * 3_600_000, // 2 h
  5 * 3_600_000, // 5 h
  8 * 3_600_000, // 8 h
  8 * 3_600_000, // 8 h
];

/** An endpoint whose every attempt failed for this long is disabled (and says why). */
export const DEFAULT_DISABLE_AFTER_MS = 3 * 24 * 3_600_000;

/** Each retry comes this share earlier or later at random, so failures that came together do not retry together. */
export const RETRY_JITTER = 0.2;

/**
 * Delay before the attempt after `attempt` failed ones, or undefined when none is left: the
 * schedule's delay ± 20 % at random. After an outage of a receiver every delivery failed at about
 * the same moment; without jitter they would all come back at the same moment again.
 */
export function nextDelay(
  delays: readonly number[],
  attempt: number,
  random: () => number = Math.random,
): number | undefined {
  const delay = delays[attempt - 1];
  if (delay === undefined) return undefined;
  return Math.round(delay * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}
