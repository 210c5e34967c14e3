/**
 * The tz database reader held to PostgreSQL's (the tz code's own localtime.c, reading the same
 * /usr/share/zoneinfo: Debian builds it --with-system-tzdata) and to zic, which compiles the files.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { parseTzif, posixTzRule, systemZone, TzifError, type OffsetRule } from '../src/tzif';

const TZDIR = '/usr/share/zoneinfo';
const SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const utc = (iso: string) => Date.parse(iso) / 1000;

let pg: Client;
beforeAll(async () => {
  pg = new Client({ connectionString: SERVER_URL });
  await pg.connect();
});
afterAll(() => pg.end());

/** PostgreSQL's offsets (seconds) of a zone, or a POSIX TZ string, at instants (seconds). */
async function postgresOffsets(zone: string, instants: number[]): Promise<number[]> {
  await pg.query(`SELECT set_config('timezone', $1, false)`, [zone]);
  const { rows } = await pg.query<{ offset: number }>(
    'SELECT extract(timezone FROM to_timestamp(t))::int AS offset FROM unnest($1::float8[]) t',
    [instants],
  );
  return rows.map((row) => row.offset);
}

/** Where two answers differ, at most five, as readable lines. */
function differences(zone: string, instants: number[], ours: OffsetRule, theirs: number[]): string[] {
  return instants
    .filter((t, i) => ours(t) !== theirs[i])
    .slice(0, 5)
    .map(
      (t) => `${zone} ${new Date(t * 1000).toISOString()}: ours ${ours(t)}, PostgreSQL ${theirs[instants.indexOf(t)]}`,
    );
}

/** Four times a year from 1900 to `until` (2100 at most), yearly from 2100 to 2200, and each change of offset those steps show, with the second before it. */
function instantsOf(rule: OffsetRule, until = 2200): number[] {
  const instants: number[] = [];
  for (let year = 1900; year < Math.min(until, 2100); year++)
    for (const month of [1, 4, 7, 10]) instants.push(Date.UTC(year, month, 15) / 1000);
  for (let year = 2100; year <= until; year++) instants.push(Date.UTC(year, 6, 1) / 1000);
  const changes: number[] = [];
  for (let i = 1; i < instants.length; i++) {
    let [low, high] = [instants[i - 1]!, instants[i]!];
    const before = rule(low);
    if (before === rule(high)) continue;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (rule(middle) === before) low = middle;
      else high = middle;
    }
    changes.push(low, high);
  }
  return [...instants, ...changes];
}

async function expectSameAsPostgres(zones: string[], ruleOf: (zone: string) => OffsetRule, until?: number) {
  const found: string[] = [];
  for (const zone of zones) {
    const rule = ruleOf(zone);
    const instants = instantsOf(rule, until);
    found.push(...differences(zone, instants, rule, await postgresOffsets(zone, instants)));
  }
  expect(found).toEqual([]);
}

describe('the tz database read as TZif (RFC 8536)', () => {
  let zones: string[];
  beforeAll(async () => {
    const { rows } = await pg.query<{ name: string }>(
      `SELECT name FROM pg_timezone_names WHERE name !~ '^(posix|right)/' AND name NOT IN ('localtime', 'posixrules', 'Factory') ORDER BY name`,
    );
    zones = rows.map((row) => row.name);
  });

  test(
    'When every zone PostgreSQL knows is read from the system files, then its offsets ' +
      "are PostgreSQL's, before, at and after each change, to 2200",
    async () => {
      expect(zones.length).toBeGreaterThan(300);
      await expectSameAsPostgres(zones, (zone) => {
        const rule = systemZone(zone);
        if (!rule) throw new Error(`${zone}: no rule`);
        return rule;
      });
    },
    120_000,
  );

  // Slim files write the changes up to a zone's last change of rules and leave the rest to the
  // footer. To 2037, the years the system's fat files spell out; later, zic 2.36's slim output
  // drops Gaza's and Hebron's predicted Ramadan changes after 2072 (glibc's zdump reads it so too).
  test(
    'When the same zones are compiled slim by zic (the footer from their last change of rules ' +
      "on), then the footer's rules give PostgreSQL's offsets too, to 2037",
    async () => {
      const slim = mkdtempSync(path.join(tmpdir(), 'tzif-slim-'));
      try {
        execFileSync('zic', ['-b', 'slim', '-d', slim, path.join(TZDIR, 'tzdata.zi')]);
        const berlin = readFileSync(path.join(slim, 'Europe/Berlin'));
        expect(berlin.length).toBeLessThan(readFileSync(path.join(TZDIR, 'Europe/Berlin')).length / 2); // slim indeed
        await expectSameAsPostgres(zones, (zone) => parseTzif(readFileSync(path.join(slim, zone))), 2037);
      } finally {
        rmSync(slim, { recursive: true, force: true });
      }
    },
    120_000,
  );

  test("When a file carries only version 1's 32-bit data, then it is read, with the last change holding after it", () => {
    const fat = readFileSync(path.join(TZDIR, 'Europe/Berlin'));
    const rule = parseTzif(fat);
    const count = (n: number) => fat.readUInt32BE(20 + 4 * n);
    const v1 = Buffer.from(
      fat.subarray(0, 44 + count(3) * 5 + count(4) * 6 + count(5) + count(2) * 8 + count(1) + count(0)),
    );
    v1[4] = 0;
    const old = parseTzif(v1);
    for (let t = utc('1902-01-01T00:00:00Z'); t < utc('2037-01-01T00:00:00Z'); t += 86_400 * 5 + 3_599)
      expect(old(t)).toBe(rule(t));
    expect(old(utc('2040-07-01T00:00:00Z'))).toBe(3_600); // the 32-bit data ends in 2037 in winter time
  });

  test.each([
    ['not TZif', Buffer.from('TZ=Europe/Berlin\n')],
    ['cut short', readFileSync(path.join(TZDIR, 'Europe/Berlin')).subarray(0, 600)],
    ['with leap seconds (right/)', readFileSync(path.join(TZDIR, 'right/Europe/Berlin'))],
  ])('When a file is %s, then it is refused', (_what, bytes) => {
    expect(() => parseTzif(bytes)).toThrow(TzifError);
  });

  test('When a name is asked for, then it is found in any case, and nothing outside the zones is', () => {
    expect(systemZone('Europe/Berlin')!(utc('2026-07-01T00:00:00Z'))).toBe(7_200);
    expect(systemZone('europe/berlin')!(utc('2026-01-01T00:00:00Z'))).toBe(3_600);
    expect(systemZone('America/Argentina/Buenos_Aires')!(utc('2026-01-01T00:00:00Z'))).toBe(-10_800);
    for (const name of [
      'Europe/Munich',
      'Europe',
      'Factory',
      'localtime',
      'posixrules',
      'posix/Europe/Berlin',
      'right/UTC',
      '../../etc/passwd',
      'zone.tab',
      '',
      '+01:00',
    ]) {
      expect([name, systemZone(name)]).toEqual([name, null]);
    }
  });
});

describe('the POSIX TZ string of a footer', () => {
  test.each([
    ['CET-1CEST,M3.5.0,M10.5.0/3', 'central Europe'],
    ['AEST-10AEDT,M10.1.0,M4.1.0/3', 'the south: daylight time over the new year'],
    ['<-02>2<-01>,M3.5.0/-1,M10.5.0/0', 'Nuuk: a change at -1:00, the day before'],
    ['IST-2IDT,M3.4.4/26,M10.5.0', 'Jerusalem: a change at 26:00, the day after'],
    ['<-04>4<-03>,M9.1.6/24,M4.1.6/24', 'Santiago: at 24:00'],
    ['XXX3YYY,J60/0,J300/0', 'Jn: 29 February never counted'],
    ['XXX3YYY,59/0,300/0', 'n: 29 February counted'],
    ['EST5EDT,0/0,J365/25', 'daylight time all year'],
    ['<+0330>-3:30', 'no daylight time, a half-hour offset'],
    ['<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45', 'minutes in offsets and times'],
    ['XXX-1YYY-3:30,M3.5.0,M10.5.0', 'a daylight offset of its own'],
  ])("When the rule is %s (%s), then its offsets are PostgreSQL's for every hour of 2038 to 2041", async (tz) => {
    const rule = posixTzRule(tz);
    const instants: number[] = [];
    for (let t = utc('2038-01-01T00:00:00Z'); t < utc('2042-01-01T00:00:00Z'); t += 3_600) instants.push(t, t + 1_799);
    expect(differences(tz, instants, rule, await postgresOffsets(tz, instants))).toEqual([]);
  });

  test.each([
    'CE-1',
    'CET',
    'CET-1CEST',
    'CET-1CEST,M3.5.0',
    'CET-1CEST,M13.1.0,M10.5.0',
    'CET-1CEST,M3.6.0,M10.5.0',
    'CET-1CEST,J366,J300',
    'CET-1CEST,M3.5.0,M10.5.0/3x',
    '<CET-1',
  ])('When the rule %p is malformed, then it is refused', (tz) => {
    expect(() => posixTzRule(tz)).toThrow(TzifError);
  });
});

describe("the next change of a zone's offset", () => {
  test('When every zone is asked for its changes from 1900 to 2200, then its offset holds up to each and the next change is never passed over', () => {
    const zones = readFileSync(path.join(TZDIR, 'tzdata.zi'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('Z '))
      .map((line) => line.split(' ')[1]!);
    const wrong: string[] = [];
    for (const zone of zones) {
      const rule = systemZone(zone);
      if (!rule?.next) continue;
      // Probes a week apart: the offset at each must be the offset at the last change at or before it.
      let start = utc('1900-01-01T00:00:00Z');
      let offset = rule(start);
      let change = rule.next(start);
      for (let t = start; t < utc('2200-01-01T00:00:00Z') && wrong.length < 5; t += 7 * 86_400) {
        while (change <= t) {
          [start, offset, change] = [change, rule(change), rule.next(change)];
          if (!(change > start)) wrong.push(`${zone}: next(${start}) = ${change}`);
        }
        if (rule(t) !== offset || rule(change - 1) !== offset)
          wrong.push(`${zone} ${new Date(t * 1000).toISOString()}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(systemZone('UTC')!.next!(utc('2026-01-01T00:00:00Z'))).toBe(Infinity);
    expect(systemZone('Europe/Berlin')!.next!(utc('2026-01-01T00:00:00Z'))).toBe(utc('2026-03-29T01:00:00Z'));
    expect(systemZone('Europe/Berlin')!.next!(utc('2150-04-01T00:00:00Z'))).toBe(utc('2150-10-25T01:00:00Z'));
  });
});
