import { instantOf, localDateOf, offsetAt } from '../src';

const iso = (epochMs: number) => new Date(epochMs).toISOString();

describe('zone arithmetic', () => {
  test('When Berlin changes to summer and back, then the offset is +1 h before and +2 h between', () => {
    expect(offsetAt('Europe/Berlin', Date.parse('2026-03-29T00:59:59Z'))).toBe(3_600_000);
    expect(offsetAt('Europe/Berlin', Date.parse('2026-03-29T01:00:00Z'))).toBe(7_200_000);
    expect(offsetAt('Europe/Berlin', Date.parse('2026-10-25T00:59:59Z'))).toBe(7_200_000);
    expect(offsetAt('Europe/Berlin', Date.parse('2026-10-25T01:00:00Z'))).toBe(3_600_000);
  });

  test('When a local time exists once, then instantOf gives it; 24:00 is the next midnight', () => {
    expect(iso(instantOf('Europe/Berlin', '2026-11-23', 8 * 60 + 30))).toBe('2026-11-23T07:30:00.000Z');
    expect(iso(instantOf('Europe/Berlin', '2026-03-29', 1440))).toBe('2026-03-29T22:00:00.000Z');
    expect(iso(instantOf('America/New_York', '2026-07-01', 9 * 60))).toBe('2026-07-01T13:00:00.000Z');
  });

  test('When a local time is skipped or shown twice, then instantOf lands after the gap or on the first of the two', () => {
    expect(iso(instantOf('Europe/Berlin', '2026-03-29', 2 * 60 + 30))).toBe('2026-03-29T01:30:00.000Z'); // 03:30 summer time
    expect(iso(instantOf('Europe/Berlin', '2026-10-25', 2 * 60 + 30))).toBe('2026-10-25T00:30:00.000Z'); // 02:30 summer time
  });

  test('When an instant is just before or after local midnight, then its local date is that of the zone', () => {
    expect(localDateOf('Europe/Berlin', Date.parse('2026-06-30T22:30:00Z'))).toBe('2026-07-01');
    expect(localDateOf('America/New_York', Date.parse('2026-07-01T02:00:00Z'))).toBe('2026-06-30');
  });
});
