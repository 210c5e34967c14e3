/**
 * What time is worth: `minutes` at `hourlyRate` minor units (cents) an hour, in minor units,
 * rounded half up to the minor unit (30 s of a rate of 1 cent an hour is 0; 30 min of 1 cent, 1).
 * Integers throughout, never a float: minutes ≤ 1,440 and a rate ≤ 10,000,000 keep the product far
 * below 2^53. The database's time_entry_amount (migration rates) is the same rule, for its sums.
 */
export function amountOf(minutes: number, hourlyRate: number | null): number | null {
  return hourlyRate === null ? null : Math.floor((minutes * hourlyRate + 30) / 60);
}
