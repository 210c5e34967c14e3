import { Transform, type TransformCallback } from 'node:stream';
import iconv from 'iconv-lite';
import type { BsNumbers, WageTypeKey } from '../payroll/payroll-settings.schemas';
import type { PayrollRow, Period } from './payroll-row';

/**
 * DATEV LODAS "ASCII-Import" of movement data (Bewegungsdaten), as DATEV's description of the
 * LODAS ASCII import lays it out:
 *
 *   [Allgemein]          the file's settings: Ziel=LODAS, Version_SST=1.0, BeraterNr, MandantenNr
 *                        (so spelled), Datumsformat=JJJJ-MM-TT, Feldtrennzeichen, Zahlenkomma,
 *                        Kommentarzeichen
 *   [Satzbeschreibung]   record type 10 = table u_lod_bwd_buchung_standard (a standard booking) with
 *                        the fields abrechnung_zeitraum; pnr; la_eigene; bs_nr; bs_wert_butab;
 *   [Bewegungsdaten]     one line per employee and wage type, its fields in the order the
 *                        [Satzbeschreibung] declares: 10;<first day of the period>;<Personalnummer>;
 *                        <Lohnart>;<Bearbeitungsschlüssel>;<value>;  e.g. 10;2026-10-01;7;1000;1;12,33;
 *
 * Bearbeitungsschlüssel (bs_nr) says what the value counts (usually 1 = hours, 2 = days); it is a
 * per-category payroll setting, since payroll offices set up their Lohnarten differently. Every record
 * line, of [Satzbeschreibung] and [Bewegungsdaten] alike, ends with the separator, as in DATEV's
 * examples (`10;2019-08-01;2;706;1;40,00;;`). A comment line (`*`) with the employee's name precedes
 * each employee's lines so the payroll office can read the file; LODAS ignores it. Windows-1252, CRLF.
 */
export const DATEV_RECORD_TYPE = '10';
export const DATEV_TABLE = 'u_lod_bwd_buchung_standard';
export const DATEV_FIELDS = ['abrechnung_zeitraum', 'pnr', 'la_eigene', 'bs_nr', 'bs_wert_butab'] as const;
/** The largest Personalnummer LODAS takes is 5 digits. */
export const DATEV_MAX_PERSONNEL_NUMBER_LENGTH = 5;

const CRLF = '\r\n';
/** The `Datumsformat` the header declares: ISO days, `YYYY-MM-DD`, as DATEV's own examples write them. */
const DATE_FORMAT = 'JJJJ-MM-TT';

export interface DatevHeader {
  consultantNumber: string;
  clientNumber: string;
  period: Period;
  /** The tenant's Bearbeitungsschlüssel per category (payroll settings). */
  bsNumbers: BsNumbers;
}

/** A comment must stay one line and must not look like a section: control characters become spaces. */
function commentText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, ' ');
}

export function datevPreamble({ consultantNumber, clientNumber, period }: DatevHeader): string {
  return [
    '[Allgemein]',
    'Ziel=LODAS',
    'Version_SST=1.0',
    `BeraterNr=${consultantNumber}`,
    `MandantenNr=${clientNumber}`,
    `Datumsformat=${DATE_FORMAT}`,
    'Feldtrennzeichen=;',
    'Zahlenkomma=,',
    'Kommentarzeichen=*',
    `* Lohndaten ${period.label.slice(5)}/${period.label.slice(0, 4)} aus hr`,
    '',
    '[Satzbeschreibung]',
    `${DATEV_RECORD_TYPE};${DATEV_TABLE};${DATEV_FIELDS.map((field) => `${field}#bwd`).join(';')};`,
    '',
    '[Bewegungsdaten]',
    '',
  ].join(CRLF);
}

type DatevField = (typeof DATEV_FIELDS)[number];

/** One movement record: its fields written in the order [Satzbeschreibung] declares them, each followed by `;`. */
export function datevLine(row: PayrollRow, { period, bsNumbers }: Pick<DatevHeader, 'period' | 'bsNumbers'>): string {
  const fields: Record<DatevField, string> = {
    abrechnung_zeitraum: period.first,
    pnr: row.personnel_number,
    la_eigene: row.wage_type,
    bs_nr: String(bsNumbers[row.category as WageTypeKey]),
    bs_wert_butab: row.quantity.replace('.', ','),
  };
  return `${DATEV_RECORD_TYPE};${DATEV_FIELDS.map((field) => `${fields[field]};`).join('')}${CRLF}`;
}

/**
 * Rows in, Windows-1252 bytes out. Characters Windows-1252 lacks (only possible in the name
 * comments) become `?`, which is all the import's character set allows.
 */
export function createPayrollDatevStream(header: DatevHeader): Transform {
  let lastPersonnelNumber: string | undefined;
  let started = false;
  const encode = (text: string) => iconv.encode(text, 'win1252');
  return new Transform({
    writableObjectMode: true,
    transform(row: PayrollRow, _encoding, callback: TransformCallback) {
      let text = '';
      if (!started) {
        started = true;
        text += datevPreamble(header);
      }
      if (row.personnel_number !== lastPersonnelNumber) {
        lastPersonnelNumber = row.personnel_number;
        text += `* ${row.personnel_number} ${commentText(row.name)}${CRLF}`;
      }
      callback(null, encode(text + datevLine(row, header)));
    },
    flush(callback: TransformCallback) {
      callback(null, started ? undefined : encode(datevPreamble(header)));
    },
  });
}
