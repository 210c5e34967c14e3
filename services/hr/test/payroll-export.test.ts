import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseString } from 'fast-csv';
import iconv from 'iconv-lite';
import { Client } from 'pg';
import request from 'supertest';
import { busyBackends, expectCutShortWhenIdle, stalledReader, waitUntil, uniquePrefix } from '@msp/testkit';
import { EXPORT_APPLICATION_NAME } from '../src/exports/payroll-export.repository';
import { startHr, type TestHr } from './support/hr';

const EXPORT = '/api/v1/exports/payroll';
const FIXTURES = path.join(__dirname, 'fixtures');

let hr: TestHr;

/**
 * The large months' seeding (hundreds of thousands of sheets and entries): the list_counts triggers
 * count every inserted sheet in the same statement (about a third of a bulk insert's time, measured),
 * so on a shared machine it may take longer than a test's default 30 s.
 */
const SEED_TIMEOUT_MS = 180_000;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

/** The documented defaults (GET /payroll/settings before any PUT), written out by hand. */
const DEFAULT_WAGE_TYPES: Record<string, string> = JSON.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'default-wage-types.json'), 'utf8'),
);

/** A caller of its own: a fresh tenant that may record HR data, change the settings and export. */
function newCaller(scope = 'read:hr write:hr read:payroll') {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${hr.token({ tenant_id: tenantId, scope })}` };
}
type Caller = ReturnType<typeof newCaller>;

async function post(caller: Caller, url: string, body: object) {
  const response = await request(hr.app).post(`/api/v1${url}`).set('Authorization', caller.auth).send(body);
  if (response.status !== 201)
    throw new Error(`POST ${url} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body as { id: string };
}

async function employee(caller: Caller, personnelNumber: string, name: string): Promise<string> {
  const userId = randomUUID();
  await post(caller, '/employees', { user_id: userId, personnel_number: personnelNumber, name });
  return userId;
}

type Entry = [start: string, end: string, category: string];
const timesheet = (caller: Caller, userId: string, date: string, entries: Entry[]) =>
  post(caller, '/timesheets', {
    user_id: userId,
    date,
    entries: entries.map(([start, end, category]) => ({ start, end, category })),
  });

async function leave(caller: Caller, userId: string, type: string, start: string, end: string, ...statuses: string[]) {
  const { id } = await post(caller, '/leaves', { user_id: userId, type, start_date: start, end_date: end });
  for (const status of statuses) {
    await request(hr.app).patch(`/api/v1/leaves/${id}`).set('Authorization', caller.auth).send({ status }).expect(200);
  }
}

const putSettings = (caller: Caller, body: object) =>
  request(hr.app).put('/api/v1/payroll/settings').set('Authorization', caller.auth).send(body).expect(200);

/**
 * The month of the hand-written fixtures (October 2026: the 1st is a Thursday, the 31st a Saturday).
 * See test/fixtures/payroll-2026-10.*: every expected number is worked out there by hand.
 */
async function seedKnownMonth(caller: Caller) {
  // 7: 8 h 20 + 4 h normal = 12.33, 1.50 overtime; vacation 29 Oct–3 Nov approved = Thu + Fri of October;
  // a requested sick leave and the sheets of September and November do not count.
  const juergen = await employee(caller, '7', 'Jürgen Müller');
  await timesheet(caller, juergen, '2026-10-01', [
    ['08:00', '12:00', 'normal'],
    ['12:30', '16:50', 'normal'],
  ]);
  await timesheet(caller, juergen, '2026-10-02', [
    ['09:00', '13:00', 'normal'],
    ['13:30', '15:00', 'overtime'],
  ]);
  await timesheet(caller, juergen, '2026-09-30', [['08:00', '12:00', 'normal']]);
  await timesheet(caller, juergen, '2026-11-02', [['08:00', '10:00', 'normal']]);
  await leave(caller, juergen, 'vacation', '2026-10-29', '2026-11-03', 'approved');
  await leave(caller, juergen, 'sick', '2026-10-12', '2026-10-13');

  // 10: a name a spreadsheet would run; 4 h travel, 1 h 40 training = 1.67; sick Mon 19–Sun 25 = 5 days;
  // rejected and cancelled leaves are not paid.
  const formula = await employee(caller, '10', '=HYPERLINK("http://x","y")');
  await timesheet(caller, formula, '2026-10-05', [
    ['06:00', '10:00', 'travel'],
    ['10:30', '12:10', 'training'],
  ]);
  await leave(caller, formula, 'sick', '2026-10-19', '2026-10-25', 'approved');
  await leave(caller, formula, 'unpaid', '2026-10-26', '2026-10-27', 'rejected');
  await leave(caller, formula, 'parental', '2026-10-28', '2026-10-28', 'approved', 'cancelled');

  // 42: on call on a Saturday, 20:00–23:59 = 3.98 h; standby (Rufbereitschaft) on Friday 18:00–22:30 =
  // 4.50 h under its own wage type (1250), not on_call's; special leave 28 Sep–1 Oct gives October its Thursday.
  const anna = await employee(caller, '42', '@Anna Smith, jr.');
  await timesheet(caller, anna, '2026-10-31', [['20:00', '23:59', 'on_call']]);
  await timesheet(caller, anna, '2026-10-30', [['18:00', '22:30', 'standby']]);
  await leave(caller, anna, 'special', '2026-09-28', '2026-10-01', 'approved');

  // 100: numerically after 42 (as text it would come first); a weekend-only leave has no working day.
  const plus = await employee(caller, '100', '+Plus Minus');
  await leave(caller, plus, 'unpaid', '2026-10-03', '2026-10-04', 'approved');
  await leave(caller, plus, 'unpaid', '2026-10-06', '2026-10-06', 'approved');

  // 5: nothing in October, so no row.
  const quiet = await employee(caller, '5', 'Quiet Quentin');
  await timesheet(caller, quiet, '2026-09-15', [['08:00', '12:00', 'normal']]);

  // A user who is no employee of the tenant (hr's API refuses such sheets; this one predates that):
  // not exported.
  const stranger = randomUUID();
  await hr.db.$executeRaw`INSERT INTO timesheets (tenant_id, user_id, date, worked_minutes, break_minutes, warnings)
    VALUES (${caller.tenantId}::uuid, ${stranger}::uuid, '2026-10-07', 60, 0, '[]')`;
  await hr.db
    .$executeRaw`INSERT INTO timesheet_entries (timesheet_id, position, start_minute, end_minute, minutes, category)
    SELECT id, 0, 480, 540, 60, 'normal' FROM timesheets WHERE tenant_id = ${caller.tenantId}::uuid AND user_id = ${stranger}::uuid`;
  await hr.db.$executeRaw`INSERT INTO leaves (tenant_id, user_id, type, status, start_date, end_date, working_days)
    VALUES (${caller.tenantId}::uuid, ${stranger}::uuid, 'vacation', 'approved', '2026-10-07', '2026-10-07', 1)`;
}

const WITH_DATEV = {
  datev: { consultant_number: '1234567', client_number: '12345' },
  wage_types: { ...DEFAULT_WAGE_TYPES, overtime: '200' },
};

function parseCsv(text: string): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    const rows: string[][] = [];
    parseString(text, { headers: false })
      .on('data', (row: string[]) => rows.push(row))
      .on('error', reject)
      .on('end', () => resolve(rows));
  });
}

const binary = (response: request.Request) =>
  response.buffer(true).parse((res, callback) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => callback(null, Buffer.concat(chunks)));
  });

function expectProblem(response: request.Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status,
    type: `urn:msp:problem:${type}`,
    request_id: response.headers['x-request-id'],
  });
}

describe('GET /exports/payroll, standby and the Bearbeitungsschlüssel', () => {
  test('When a day has work and standby, then the standby hours are exported under their own wage type in CSV and DATEV, apart from worked hours', async () => {
    const caller = newCaller();
    const user = await employee(caller, '3', 'Rufbereitschaft');
    await timesheet(caller, user, '2026-11-02', [
      ['08:00', '12:00', 'normal'],
      ['12:00', '20:00', 'standby'],
      ['20:00', '21:00', 'on_call'],
    ]);
    await putSettings(caller, { ...WITH_DATEV, wage_types: { ...DEFAULT_WAGE_TYPES, standby: '1234' } });

    const csv = await request(hr.app).get(`${EXPORT}?period=2026-11`).set('Authorization', caller.auth);
    const datev = await binary(
      request(hr.app).get(`${EXPORT}?period=2026-11&format=datev`).set('Authorization', caller.auth),
    );

    expect(csv.status).toBe(200);
    expect((await parseCsv(csv.text)).slice(1)).toEqual([
      ['3', 'Rufbereitschaft', '2026-11', '1000', 'normal', '4.00', 'hours'],
      ['3', 'Rufbereitschaft', '2026-11', '1200', 'on_call', '1.00', 'hours'],
      ['3', 'Rufbereitschaft', '2026-11', '1234', 'standby', '8.00', 'hours'],
    ]);
    expect(iconv.decode(datev.body as Buffer, 'win1252')).toContain(
      '[Bewegungsdaten]\r\n* 3 Rufbereitschaft\r\n10;2026-11-01;3;1000;1;4,00;\r\n10;2026-11-01;3;1200;1;1,00;\r\n10;2026-11-01;3;1234;1;8,00;\r\n',
    );
  });

  test('When a sick leave covers days of an approved vacation, then those days are paid as sick, not as vacation too (§9 BUrlG)', async () => {
    const caller = newCaller();
    const user = await employee(caller, '4', 'Krank im Urlaub');
    // Vacation Monday 2–Friday 6 November 2026, sick Thursday 5–Monday 9 November.
    await leave(caller, user, 'vacation', '2026-11-02', '2026-11-06', 'approved');
    await leave(caller, user, 'sick', '2026-11-05', '2026-11-09', 'approved');

    const csv = await request(hr.app).get(`${EXPORT}?period=2026-11`).set('Authorization', caller.auth);

    expect(csv.status).toBe(200);
    expect((await parseCsv(csv.text)).slice(1)).toEqual([
      ['4', 'Krank im Urlaub', '2026-11', '1500', 'vacation', '3.00', 'days'],
      ['4', 'Krank im Urlaub', '2026-11', '1600', 'sick', '3.00', 'days'],
    ]);
  });

  test('When the settings give categories their own bs_nr, then the DATEV lines carry them, and the others keep 1 for hours and 2 for days', async () => {
    const caller = newCaller();
    const user = await employee(caller, '4', 'Schlüssel');
    await timesheet(caller, user, '2026-11-02', [
      ['08:00', '12:00', 'normal'],
      ['13:00', '15:00', 'overtime'],
      ['15:30', '17:00', 'standby'],
    ]);
    await leave(caller, user, 'vacation', '2026-11-03', '2026-11-04', 'approved');
    await leave(caller, user, 'sick', '2026-11-05', '2026-11-05', 'approved');
    await putSettings(caller, { ...WITH_DATEV, bs_nr: { normal: 7, standby: 5, vacation: 30 } });

    const datev = await binary(
      request(hr.app).get(`${EXPORT}?period=2026-11&format=datev`).set('Authorization', caller.auth),
    );

    expect(datev.status).toBe(200);
    const movements = iconv
      .decode(datev.body as Buffer, 'win1252')
      .split('\r\n')
      .filter((line) => line.startsWith('10;2026'));
    expect(movements).toEqual([
      '10;2026-11-01;4;200;1;2,00;',
      '10;2026-11-01;4;1000;7;4,00;',
      '10;2026-11-01;4;1250;5;1,50;',
      '10;2026-11-01;4;1500;30;2,00;',
      '10;2026-11-01;4;1600;2;1,00;',
    ]);
  });
});

describe('GET /exports/payroll, a known month', () => {
  let caller: Caller;
  beforeAll(async () => {
    caller = newCaller();
    await seedKnownMonth(caller);
    await putSettings(caller, WITH_DATEV);
  });

  test('When the month is exported as CSV, then every cell equals the hand-written file, and the bytes too', async () => {
    const expected = readFileSync(path.join(FIXTURES, 'payroll-2026-10.csv'));

    const response = await binary(request(hr.app).get(`${EXPORT}?period=2026-10`).set('Authorization', caller.auth));

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe('attachment; filename="payroll-2026-10.csv"');
    const body = response.body as Buffer;
    expect(await parseCsv(body.toString('utf8'))).toEqual(await parseCsv(expected.toString('utf8')));
    expect(body.toString('utf8')).toBe(expected.toString('utf8'));
    // The umlaut is UTF-8 (ü = C3 BC), the formula name starts with a quote inside its quoted cell.
    expect(body.includes(Buffer.from([0xc3, 0xbc]))).toBe(true);
    expect(body.toString('utf8')).toContain('\r\n10,"\'=HYPERLINK(');
  });

  test('When format=csv is given, then it is the same file', async () => {
    const expected = readFileSync(path.join(FIXTURES, 'payroll-2026-10.csv'), 'utf8');
    const response = await request(hr.app).get(`${EXPORT}?period=2026-10&format=csv`).set('Authorization', caller.auth);
    expect(response.status).toBe(200);
    expect(response.text).toBe(expected);
  });

  test('When the month is exported for DATEV, then every line and field equals the hand-written Windows-1252 file', async () => {
    const expected = readFileSync(path.join(FIXTURES, 'payroll-2026-10.datev.txt'));

    const response = await binary(
      request(hr.app).get(`${EXPORT}?period=2026-10&format=datev`).set('Authorization', caller.auth),
    );

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=windows-1252');
    expect(response.headers['content-disposition']).toBe('attachment; filename="payroll-2026-10.txt"');
    const body = response.body as Buffer;
    const cells = (bytes: Buffer) =>
      iconv
        .decode(bytes, 'win1252')
        .split('\r\n')
        .map((line) => line.split(';'));
    expect(cells(body)).toEqual(cells(expected));
    expect(body.equals(expected)).toBe(true);
    // Windows-1252: ü is the single byte FC, never UTF-8's C3 BC; lines end in CRLF only.
    expect(body.includes(Buffer.from('* 7 J\u00fcrgen M\u00fcller\r\n', 'latin1'))).toBe(true);
    expect(body.includes(Buffer.from([0xc3, 0xbc]))).toBe(false);
    expect(body.toString('latin1').replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });

  test(
    "When the month is exported for DATEV, then the header keys are spelled as DATEV's, every " +
      'record line ends with ";" and the fields follow [Satzbeschreibung]',
    async () => {
      const response = await binary(
        request(hr.app).get(`${EXPORT}?period=2026-10&format=datev`).set('Authorization', caller.auth),
      );
      const lines = iconv.decode(response.body as Buffer, 'win1252').split('\r\n');
      const sections = new Map<string, string[]>();
      let section = '';
      for (const line of lines) {
        if (/^\[.+\]$/.test(line)) sections.set((section = line), []);
        else if (line !== '' && !line.startsWith('*')) sections.get(section)!.push(line);
      }

      expect([...sections.keys()]).toEqual(['[Allgemein]', '[Satzbeschreibung]', '[Bewegungsdaten]']);
      const header = Object.fromEntries(
        sections
          .get('[Allgemein]')!
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      expect(header).toMatchObject({
        Ziel: 'LODAS',
        Version_SST: '1.0',
        BeraterNr: '1234567',
        MandantenNr: '12345',
        Datumsformat: 'JJJJ-MM-TT',
      });
      for (const record of [...sections.get('[Satzbeschreibung]')!, ...sections.get('[Bewegungsdaten]')!])
        expect(record).toMatch(/;$/);

      const [description] = sections.get('[Satzbeschreibung]')!;
      const [type, table, ...declared] = description!.slice(0, -1).split(';');
      expect([type, table]).toEqual(['10', 'u_lod_bwd_buchung_standard']);
      const names = declared.map((field) => field.replace(/#bwd$/, ''));
      const movements = sections.get('[Bewegungsdaten]')!.map((line) => {
        const [recordType, ...values] = line.slice(0, -1).split(';');
        expect(recordType).toBe('10');
        expect(values).toHaveLength(names.length);
        return Object.fromEntries(names.map((name, i) => [name, values[i]]));
      });
      expect(movements).toHaveLength(10);
      for (const movement of movements) {
        expect(movement.abrechnung_zeitraum).toBe('2026-10-01'); // JJJJ-MM-TT, as declared
        expect(movement.pnr).toMatch(/^[0-9]{1,5}$/);
        expect(movement.bs_wert_butab).toMatch(/^[0-9]+,[0-9]{2}$/);
      }
      expect(movements.find((m) => m.pnr === '42' && m.la_eigene === '1250')).toEqual({
        abrechnung_zeitraum: '2026-10-01',
        pnr: '42',
        la_eigene: '1250',
        bs_nr: '1',
        bs_wert_butab: '4,50',
      });
    },
  );

  test('When another tenant exports the same month, then it gets only its header', async () => {
    const response = await request(hr.app)
      .get(`${EXPORT}?period=2026-10`)
      .set('Authorization', newCaller('read:payroll').auth);
    expect(response.status).toBe(200);
    expect(response.text).toBe('personnel_number,name,period,wage_type,category,quantity,unit\r\n');
  });

  test('When a month without anything is exported, then the CSV is the header row only', async () => {
    const response = await request(hr.app).get(`${EXPORT}?period=2026-12`).set('Authorization', caller.auth);
    expect(response.status).toBe(200);
    expect(response.text).toBe('personnel_number,name,period,wage_type,category,quantity,unit\r\n');
  });

  test('When the token has read:hr and write:hr but not read:payroll, then it answers 403', async () => {
    const response = await request(hr.app)
      .get(`${EXPORT}?period=2026-10`)
      .set('Authorization', `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'read:hr write:hr' })}`);
    expectProblem(response, 403, 'insufficient-scope');
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="msp", error="insufficient_scope", scope="read:payroll"',
    );
  });

  test('When the token has admin:tenant, then it may export', async () => {
    const response = await request(hr.app)
      .get(`${EXPORT}?period=2026-10`)
      .set('Authorization', `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'admin:tenant' })}`);
    expect(response.status).toBe(200);
    expect(response.text).toBe(readFileSync(path.join(FIXTURES, 'payroll-2026-10.csv'), 'utf8'));
  });
});

describe('GET /exports/payroll, before any settings', () => {
  test('When the tenant never configured payroll, then the CSV uses the default wage types', async () => {
    const caller = newCaller();
    const userId = await employee(caller, '3', 'Erika Mustermann');
    await timesheet(caller, userId, '2026-10-05', [
      ['08:00', '09:30', 'overtime'],
      ['10:00', '11:00', 'normal'],
    ]);

    const response = await request(hr.app).get(`${EXPORT}?period=2026-10`).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.text).toBe(
      'personnel_number,name,period,wage_type,category,quantity,unit\r\n' +
        '3,Erika Mustermann,2026-10,1000,normal,1.00,hours\r\n' +
        '3,Erika Mustermann,2026-10,1100,overtime,1.50,hours\r\n',
    );
  });

  test('When the DATEV file is asked without consultant and client numbers, then it answers 422 naming both and sends no file', async () => {
    const caller = newCaller();
    const userId = await employee(caller, '3', 'Erika Mustermann');
    await timesheet(caller, userId, '2026-10-05', [['08:00', '09:30', 'normal']]);

    const response = await request(hr.app)
      .get(`${EXPORT}?period=2026-10&format=datev`)
      .set('Authorization', caller.auth);

    expectProblem(response, 422, 'unprocessable');
    expect(response.headers['content-disposition']).toBeUndefined();
    expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual([
      'datev.consultant_number',
      'datev.client_number',
    ]);
    expect(response.body.detail).toContain('consultant and client numbers');
  });
});

describe('GET /exports/payroll, cells a spreadsheet would run', () => {
  test('When names start with -, +, =, @, a tab or a CR, then those cells get a leading quote, and others are left alone', async () => {
    const caller = newCaller();
    const names = ['-2+3', '+SUM(A1)', '=1+1', '@cmd', '\tTabbed', '\rReturned', 'Anna-Lena Meyer', "O'Brien"];
    for (const [index, name] of names.entries()) {
      const userId = await employee(caller, String(index + 1), name);
      await timesheet(caller, userId, '2026-10-05', [['08:00', '09:00', 'normal']]);
    }

    const response = await request(hr.app).get(`${EXPORT}?period=2026-10`).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    const cells = await parseCsv(response.text);
    expect(cells.slice(1).map((row) => row[1])).toEqual([
      "'-2+3",
      "'+SUM(A1)",
      "'=1+1",
      "'@cmd",
      "'\tTabbed",
      "'\rReturned",
      'Anna-Lena Meyer',
      "O'Brien",
    ]);
    // A CR inside a cell is quoted (RFC 4180), so it cannot end the record.
    expect(response.text).toContain('6,"\'\rReturned",2026-10,1000,normal,1.00,hours\r\n');
  });

  test('When a DATEV name has a line break or a letter Windows-1252 lacks, then its comment stays one line with a ?', async () => {
    const caller = newCaller();
    await putSettings(caller, WITH_DATEV);
    const userId = await employee(caller, '8', 'Łukasz\r\n[Allgemein] Nowak');
    await timesheet(caller, userId, '2026-10-05', [['08:00', '09:00', 'normal']]);

    const response = await binary(
      request(hr.app).get(`${EXPORT}?period=2026-10&format=datev`).set('Authorization', caller.auth),
    );

    expect(response.status).toBe(200);
    const lines = iconv.decode(response.body as Buffer, 'win1252').split('\r\n');
    expect(lines.slice(lines.indexOf('[Bewegungsdaten]') + 1)).toEqual([
      '* 8 ?ukasz  [Allgemein] Nowak',
      '10;2026-10-01;8;1000;1;1,00;',
      '',
    ]);
  });
});

describe('GET /exports/payroll, DATEV limits', () => {
  test('When employees in the month have personnel numbers of more than 5 digits, then it answers 422 naming every one of them', async () => {
    const caller = newCaller();
    await putSettings(caller, WITH_DATEV);
    const long = await employee(caller, '123456', 'Lang Eins');
    const longer = await employee(caller, '00000000000000000001', 'Lang Zwei');
    const fine = await employee(caller, '99999', 'Kurz');
    const idle = await employee(caller, '7654321', 'Nicht im Monat');
    await timesheet(caller, long, '2026-10-05', [['08:00', '09:00', 'normal']]);
    await leave(caller, longer, 'vacation', '2026-10-05', '2026-10-06', 'approved');
    await timesheet(caller, fine, '2026-10-05', [['08:00', '09:00', 'normal']]);
    await timesheet(caller, idle, '2026-11-05', [['08:00', '09:00', 'normal']]);

    const response = await request(hr.app)
      .get(`${EXPORT}?period=2026-10&format=datev`)
      .set('Authorization', caller.auth);

    expectProblem(response, 422, 'unprocessable');
    expect(response.body.personnel_numbers).toEqual(['00000000000000000001', '123456']);
    expect(response.body.errors).toEqual([
      { field: 'personnel_number', message: expect.stringMatching(/^00000000000000000001 has more than 5 digits/) },
      { field: 'personnel_number', message: expect.stringMatching(/^123456 has more than 5 digits/) },
    ]);
    expect(response.body.detail).toContain('00000000000000000001, 123456');

    // The CSV has no such limit.
    const csv = await request(hr.app).get(`${EXPORT}?period=2026-10`).set('Authorization', caller.auth);
    expect(csv.status).toBe(200);
    expect(
      csv.text
        .split('\r\n')
        .slice(1, -1)
        .map((line) => line.split(',')[0]),
    ).toEqual(['00000000000000000001', '99999', '123456']);
  });
});

describe('GET /exports/payroll, bad requests', () => {
  test.each([
    ['period=2026-13', 'period'],
    ['period=2026-1', 'period'],
    ['period=2026-00', 'period'],
    ['period=26-10', 'period'],
    ['period=0000-01', 'period'],
    ['period=2026-10-01', 'period'],
    ['', 'period'],
    ['period=2026-10&format=xlsx', 'format'],
    ['period=2026-10&format=CSV', 'format'],
    ['period=2026-10&unknown=1', 'unknown'],
  ])('When the query is "%s", then it answers 400 naming %s', async (query, field) => {
    const response = await request(hr.app).get(`${EXPORT}?${query}`).set('Authorization', newCaller().auth);
    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
  });

  test('When there is no token, then it answers 401', async () => {
    const response = await request(hr.app).get(`${EXPORT}?period=2026-10`);
    expectProblem(response, 401, 'invalid-token');
  });
});

/** The export's backends that are not idle in its pool: the ones still holding a query or cursor. */
const exportBackendsBusy = (admin: Client) => busyBackends(admin, EXPORT_APPLICATION_NAME);

describe('GET /exports/payroll, streamed', () => {
  const EMPLOYEES = 6_000;
  let caller: Caller;
  let server: http.Server;
  let admin: Client;

  beforeAll(async () => {
    caller = newCaller();
    // Large enough that the file (~0.5 MB a category) does not fit in the socket buffers at once.
    await seedLargeMonth(caller.tenantId, EMPLOYEES);
    server = http.createServer(hr.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    admin = new Client({ connectionString: hr.databaseUrl });
    await admin.connect();
  }, SEED_TIMEOUT_MS);
  afterAll(async () => {
    await admin?.end();
    await new Promise((resolve) => server?.close(resolve));
  });

  const busyExportBackends = () => exportBackendsBusy(admin);

  test('When the whole large month is read, then every employee is in it once per category, in personnel-number order', async () => {
    const response = await request(server).get(`${EXPORT}?period=2026-10`).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.headers['transfer-encoding']).toBe('chunked');
    const lines = response.text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.length - 2).toBe(EMPLOYEES * 2);
    expect(lines[1]).toBe('1,Employee 1,2026-10,1000,normal,176.00,hours');
    expect(lines[2]).toBe('1,Employee 1,2026-10,1100,overtime,22.00,hours');
    expect(lines.at(-2)).toBe(`${EMPLOYEES},Employee ${EMPLOYEES},2026-10,1100,overtime,22.00,hours`);
    await waitUntil(async () => (await busyExportBackends()).length === 0, 'the export connection is back in its pool');
  });

  test('When the client stops reading and then disconnects mid-file, then the query and its cursor are gone from the database', async () => {
    const url = new URL(`${EXPORT}?period=2026-10`, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const received: Buffer[] = [];
    const req = http.get(url, { headers: { Authorization: caller.auth } });
    const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
      req.on('response', resolve).on('error', reject),
    );
    expect(response.statusCode).toBe(200);
    // Read one chunk, then stop: back-pressure leaves the cursor open and waiting, mid-file.
    await new Promise<void>((resolve) => response.once('data', (chunk: Buffer) => (received.push(chunk), resolve())));
    response.pause();
    let held: number[] = [];
    await waitUntil(async () => (held = await busyExportBackends()).length === 1, 'the paused export holds its cursor');

    req.destroy();

    await waitUntil(async () => {
      const { rows } = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state <> 'idle'`, [
        held[0],
      ]);
      return rows.length === 0;
    }, 'the export backend has let go of its query');
    expect(await busyExportBackends()).toEqual([]);
    expect(Buffer.concat(received).toString('utf8')).toMatch(
      /^personnel_number,name,period,wage_type,category,quantity,unit/,
    );

    // The service still answers exports afterwards (the pool was not left broken).
    const again = await request(server).get(`${EXPORT}?period=2026-12`).set('Authorization', caller.auth);
    expect(again.status).toBe(200);
  });

  test('When the client disconnects while the query has not produced its first row, then the query is cancelled at once', async () => {
    // Hold a lock the export's query must wait for: without the cancel it would wait as long as the lock is held.
    const locker = new Client({ connectionString: hr.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE timesheet_entries IN ACCESS EXCLUSIVE MODE');
      const url = new URL(`${EXPORT}?period=2026-10`, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const req = http.get(url, { headers: { Authorization: caller.auth } });
      req.on('error', () => undefined); // destroyed below, on purpose
      let waiting: number[] = [];
      await waitUntil(async () => {
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
          [EXPORT_APPLICATION_NAME],
        );
        waiting = rows.map((row) => row.pid);
        return waiting.length === 1;
      }, 'the export query waits for the lock');

      req.destroy();

      await waitUntil(
        async () =>
          (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state <> 'idle'`, [waiting[0]]))
            .rowCount === 0,
        'the waiting query is cancelled',
      );
      expect(await busyExportBackends()).toEqual([]);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});

describe('GET /exports/payroll, readers that stop reading and a full pool', () => {
  // Large enough (~10 MB) that the file cannot hide in the socket buffers of a reader that stops.
  const WIDE_EMPLOYEES = 10_000;
  const IDLE_TIMEOUT_MS = 500;
  const ACQUIRE_TIMEOUT_MS = 300;
  /** Two instances of hr sharing database and Redis (replicas), whose exports never time out idle readers here. */
  let replicas: [TestHr, TestHr];
  /** One that ends a response whose reader takes no byte for IDLE_TIMEOUT_MS. */
  let impatient: TestHr;
  const servers: http.Server[] = [];
  let admin: Client;
  let wide: Caller;
  let wideToo: Caller;

  async function listen(app: http.RequestListener): Promise<string> {
    const server = http.createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  let replicaUrls: [string, string];
  let impatientUrl: string;

  beforeAll(async () => {
    wide = newCaller();
    wideToo = newCaller();
    await seedWideMonth(wide.tenantId, WIDE_EMPLOYEES);
    await seedWideMonth(wideToo.tenantId, WIDE_EMPLOYEES);
    const leasePrefix = uniquePrefix('hr-export');
    const patient = { exports: { idleTimeoutMs: 600_000, acquireTimeoutMs: ACQUIRE_TIMEOUT_MS, leasePrefix } };
    replicas = [
      await startHr({ databaseUrl: hr.databaseUrl, settings: patient }),
      await startHr({ databaseUrl: hr.databaseUrl, settings: patient }),
    ];
    // Two connections, and a minute's patience for one: freeing a stalled reader must not need a connection.
    impatient = await startHr({
      databaseUrl: hr.databaseUrl,
      settings: {
        exports: {
          idleTimeoutMs: IDLE_TIMEOUT_MS,
          poolSize: 2,
          acquireTimeoutMs: 60_000,
          leasePrefix: uniquePrefix('hr-export'),
        },
      },
    });
    replicaUrls = [await listen(replicas[0].app), await listen(replicas[1].app)];
    impatientUrl = await listen(impatient.app);
    admin = new Client({ connectionString: hr.databaseUrl });
    await admin.connect();
  }, SEED_TIMEOUT_MS);
  afterAll(async () => {
    await admin?.end();
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    for (const instance of [...(replicas ?? []), impatient]) await instance?.close();
  });

  /** A caller of `instance` (its issuer signs the token) for the tenant of `caller`. */
  const authOn = (instance: TestHr, caller: Caller) =>
    `Bearer ${instance.token({ tenant_id: caller.tenantId, scope: 'read:payroll' })}`;

  const busyExportBackends = () => exportBackendsBusy(admin);

  /** An export whose client takes its first bytes and then stops reading. */
  /** A reader of October's export that took one chunk and stopped reading. */
  const stalledExport = (url: string, auth: string) =>
    stalledReader(new URL(`${EXPORT}?period=2026-10`, url), { Authorization: auth });

  /** Ends the test's own readers and waits until the export has given everything back. */
  async function letGo(...readers: { req: http.ClientRequest }[]) {
    for (const reader of readers) reader.req.destroy();
    await waitUntil(async () => (await busyExportBackends()).length === 0, 'every export backend is idle again');
  }

  test('When a tenant starts a second export while its first still streams, then it answers 429 with Retry-After, on any replica', async () => {
    const first = await stalledExport(replicaUrls[0], authOn(replicas[0], wide));
    expect(first.status).toBe(200);
    try {
      for (const [index, instance] of replicas.entries()) {
        const second = await request(replicaUrls[index]!)
          .get(`${EXPORT}?period=2026-10`)
          .set('Authorization', authOn(instance, wide));
        expectProblem(second, 429, 'export-in-progress');
        expect(second.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      }
    } finally {
      await letGo(first);
    }
    // Its lease ends with it: the tenant may export again.
    const next = await request(replicaUrls[1])
      .get(`${EXPORT}?period=2026-11`)
      .set('Authorization', authOn(replicas[1], wide));
    expect(next.status).toBe(200);
  });

  test('When every connection of the export pool is busy, then the next export answers 503 with Retry-After after the acquire timeout', async () => {
    // Ten exports of ten tenants wait for a lock their query needs, each holding a connection.
    const locker = new Client({ connectionString: hr.databaseUrl });
    await locker.connect();
    const waiting: { req: http.ClientRequest }[] = [];
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE timesheet_entries IN ACCESS EXCLUSIVE MODE');
      for (let i = 0; i < 10; i++) {
        const req = http.get(new URL(`${EXPORT}?period=2026-10`, replicaUrls[0]), {
          headers: { Authorization: authOn(replicas[0], newCaller()) },
        });
        req.on('error', () => undefined); // destroyed below
        waiting.push({ req });
      }
      await waitUntil(async () => (await busyExportBackends()).length === 10, 'ten exports hold the ten connections');

      const response = await request(replicaUrls[0])
        .get(`${EXPORT}?period=2026-10`)
        .set('Authorization', authOn(replicas[0], newCaller()));

      expectProblem(response, 503, 'export-capacity-exhausted');
      expect(response.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await letGo(...waiting);
    }
  });

  test('When a reader takes no byte for EXPORT_IDLE_TIMEOUT_MS, then its response is ended and its connection and lease are given back', async () => {
    const reader = await stalledExport(impatientUrl, authOn(impatient, wide));
    expect(reader.status).toBe(200);
    // The file stops short: what the reader takes once the cursor is let go ends without the end of a complete response.
    await expectCutShortWhenIdle(reader, busyExportBackends);
    const again = await request(impatientUrl)
      .get(`${EXPORT}?period=2026-11`)
      .set('Authorization', authOn(impatient, wide));
    expect(again.status).toBe(200);
  });

  test('When stalled readers hold every connection of the pool, then the idle timeout frees them without waiting for a connection', async () => {
    const readers = await Promise.all(
      [wide, wideToo].map((caller) => stalledExport(impatientUrl, authOn(impatient, caller))),
    );
    try {
      expect(readers.map((reader) => reader.status)).toEqual([200, 200]);

      await waitUntil(
        async () => (await busyExportBackends()).length === 0,
        'both stalled exports let go of their cursors',
      );

      const next = await request(impatientUrl)
        .get(`${EXPORT}?period=2026-11`)
        .set('Authorization', authOn(impatient, newCaller()));
      expect(next.status).toBe(200);
    } finally {
      for (const reader of readers) reader.req.destroy();
    }
  });

  test('When the OpenAPI document is read, then GET /exports/payroll documents its 429 and 503 with Retry-After', async () => {
    const document = (await request(hr.app).get('/api/v1/openapi.json').expect(200)).body;
    const responses = document.paths['/exports/payroll'].get.responses;
    for (const [status, code] of [
      ['429', 'export-in-progress'],
      ['503', 'export-capacity-exhausted'],
    ] as const) {
      expect(responses[status].headers['Retry-After']).toBeDefined();
      expect(responses[status].content['application/problem+json'].example.type).toBe(`urn:msp:problem:${code}`);
    }
  });

  test("When readers of tenant A stop reading, more of them than the pool has connections, then tenant B's export still completes", async () => {
    const readers = await Promise.all(
      Array.from({ length: 11 }, () => stalledExport(replicaUrls[0], authOn(replicas[0], wide))),
    );
    try {
      expect(readers.filter((reader) => reader.status === 200)).toHaveLength(1);
      const other = newCaller();
      await seedWideMonth(other.tenantId, 3);

      const response = await request(replicaUrls[0])
        .get(`${EXPORT}?period=2026-10`)
        .set('Authorization', authOn(replicas[0], other));

      expect(response.status).toBe(200);
      const lines = response.text.split('\r\n');
      expect(lines[0]).toBe('personnel_number,name,period,wage_type,category,quantity,unit');
      expect(lines).toHaveLength(1 + 3 * 5 + 1);
    } finally {
      await letGo(...readers);
    }
  });
});

/**
 * Employees 1..n with one timesheet in October of an hour in each of the five categories: five rows
 * of about 200 bytes each (long names), so the file is large for little seeding.
 */
async function seedWideMonth(tenantId: string, employees: number) {
  await hr.db.$executeRaw`INSERT INTO employees (tenant_id, user_id, personnel_number, name)
    SELECT ${tenantId}::uuid, gen_random_uuid(), n::text, 'Employee ' || n || ' ' || repeat('Lohnabrechnung ', 10)
      FROM generate_series(1, ${employees}::int) AS n`;
  await hr.db.$executeRaw`INSERT INTO timesheets (tenant_id, user_id, date, worked_minutes, break_minutes, warnings)
    SELECT ${tenantId}::uuid, e.user_id, '2026-10-01', 300, 0, '[]' FROM employees e WHERE e.tenant_id = ${tenantId}::uuid`;
  await hr.db
    .$executeRaw`INSERT INTO timesheet_entries (timesheet_id, position, start_minute, end_minute, minutes, category)
    SELECT t.id, v.position, 480 + 60 * v.position, 540 + 60 * v.position, 60, v.category
      FROM timesheets t CROSS JOIN (VALUES (0, 'normal'), (1, 'overtime'), (2, 'on_call'), (3, 'travel'), (4, 'training')) AS v(position, category)
     WHERE t.tenant_id = ${tenantId}::uuid`;
}

/** Employees 1..n with October's 22 working days of 8 h normal + 1 h overtime each, written by SQL (fast). */
async function seedLargeMonth(tenantId: string, employees: number) {
  await hr.db.$executeRaw`INSERT INTO employees (tenant_id, user_id, personnel_number, name)
    SELECT ${tenantId}::uuid, gen_random_uuid(), n::text, 'Employee ' || n FROM generate_series(1, ${employees}::int) AS n`;
  await hr.db.$executeRaw`INSERT INTO timesheets (tenant_id, user_id, date, worked_minutes, break_minutes, warnings)
    SELECT ${tenantId}::uuid, e.user_id, d::date, 540, 30, '[]'
      FROM employees e CROSS JOIN generate_series('2026-10-01'::date, '2026-10-31'::date, interval '1 day') AS d
     WHERE e.tenant_id = ${tenantId}::uuid AND extract(isodow FROM d) < 6`;
  await hr.db
    .$executeRaw`INSERT INTO timesheet_entries (timesheet_id, position, start_minute, end_minute, minutes, category)
    SELECT t.id, v.position, v.start_minute, v.end_minute, v.end_minute - v.start_minute, v.category
      FROM timesheets t CROSS JOIN (VALUES (0, 480, 720, 'normal'), (1, 750, 990, 'normal'), (2, 990, 1050,
        'overtime')) AS v(position, start_minute, end_minute, category)
     WHERE t.tenant_id = ${tenantId}::uuid`;
}
