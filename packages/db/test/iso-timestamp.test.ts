import { Client } from 'pg';
import { isoTimestamp, isoTimestampSql, testServerUrl } from '../src';

// isoTimestamp turns PostgreSQL's text for a timestamptz into what Date#toISOString would give,
// without the Date: checked here against PostgreSQL's own output and pg's own parser.
const VALUES = [
  '2026-11-24 00:25:05.7+00',
  '2026-11-24 00:25:05.12+00',
  '2026-11-24 00:25:05.123+00',
  '2026-11-24 00:25:05+00',
  '2026-12-31 23:59:59.999+00',
  '1999-01-01 00:00:00.001+00',
  '0099-06-15 12:00:00.5+00',
  '12026-01-01 00:00:00+00',
];

async function asPostgresWrites(timeZone: string): Promise<{ text: string; date: Date }[]> {
  const client = new Client({ connectionString: testServerUrl() });
  await client.connect();
  try {
    await client.query(`SET TimeZone = '${timeZone}'`);
    const { rows } = await client.query<{ text: string; date: Date }>(
      'SELECT v::timestamptz(3)::text AS text, v::timestamptz(3) AS date FROM unnest($1::text[]) AS v',
      [VALUES],
    );
    return rows;
  } finally {
    await client.end();
  }
}

describe('isoTimestamp', () => {
  test.each(['UTC', 'Europe/Berlin', 'America/St_Johns'])(
    'When the session runs in %s, then every value reads as Date#toISOString writes it',
    async (timeZone) => {
      const rows = await asPostgresWrites(timeZone);
      expect(rows).toHaveLength(VALUES.length);
      for (const { text, date } of rows) expect(isoTimestamp(text)).toBe(date.toISOString());
    },
  );

  test('When the text is UTC with a trimmed fraction, then the milliseconds are padded', () => {
    expect(isoTimestamp('2026-11-24 00:25:05.7+00')).toBe('2026-11-24T00:25:05.700Z');
    expect(isoTimestamp('2026-11-24 00:25:05+00')).toBe('2026-11-24T00:25:05.000Z');
  });
});

describe('isoTimestampSql', () => {
  test.each(['UTC', 'Europe/Berlin', 'America/St_Johns'])(
    'When PostgreSQL formats a value in a session in %s, then it writes what isoTimestamp reads',
    async (timeZone) => {
      const client = new Client({ connectionString: testServerUrl() });
      await client.connect();
      try {
        await client.query(`SET TimeZone = '${timeZone}'`);
        // Years past 9999 are no timestamp the API writes (to_char has no sign or extended year for them).
        const within = VALUES.filter((value) => !value.startsWith('12026'));
        const { rows } = await client.query<{ formatted: string; date: Date }>(
          `SELECT ${isoTimestampSql('v::timestamptz(3)')} AS formatted, v::timestamptz(3) AS date FROM unnest($1::text[]) AS v`,
          [within],
        );
        expect(rows).toHaveLength(within.length);
        for (const { formatted, date } of rows) expect(formatted).toBe(date.toISOString());
      } finally {
        await client.end();
      }
    },
  );
});
