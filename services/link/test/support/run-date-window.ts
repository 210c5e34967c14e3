/**
 * The days a run may be planned for, worked out here from today (UTC) as the API documents them:
 * ten years back to five years ahead. Each run kind's tests probe both edges and beyond.
 */
export function runDateWindow() {
  const now = new Date();
  const shifted = (years: number, days = 0) =>
    new Date(Date.UTC(now.getUTCFullYear() + years, now.getUTCMonth(), now.getUTCDate() + days))
      .toISOString()
      .slice(0, 10);
  return {
    earliest: shifted(-10),
    latest: shifted(5),
    /** Days outside: just beyond either edge, and the far ends of what the date format takes. */
    outside: [shifted(-10, -1), shifted(5, 1), '9999-12-31', '0999-06-01', '0001-01-01'],
  };
}
