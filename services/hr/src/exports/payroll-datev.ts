import { Transform, type TransformCallback } from 'node:stream';
import iconv from 'iconv-lite';
import type { PayrollRow, Period } from './payroll-row';

/**
 * DATEV LODAS "ASCII-Import" of movement data (Bewegungsdaten), as DATEV's description of the
 * LODAS ASCII import lays it out:
 *
 *   [Allgemein]          the file's settings: Ziel=LODAS, Version_SST=1.0, BeraterNr, MandantenNr,
 *                        Feldtrennzeichen, Zahlenkomma, Datumsformat, Kommentarzeichen
 *   [Satzbeschreibung]   record type 10 = table u_lod_bwd_buchung_standard (a standard booking) with
 *                        the fields abrechnung_zeitraum; pnr; la_eigene; bs_nr; bs_wert_butab
 *   [Bewegungsdaten]     one line per employee and wage type: 10;<first day of the period>;
 *                        <Personalnummer>;<Lohnart>;<Bearbeitungsschlüssel>;<value>;
 *
 * Bearbeitungsschlüssel (bs_nr) says what the value counts: 1 = hours, 2 = days. Every line ends with
 * the separator, as in DATEV's examples. A comment line (`*`) with the employee's name precedes each
 * employee's lines so the payroll office can read the file; LODAS ignores it. Windows-1252, CRLF.
 */
export const DATEV_RECORD_TYPE = '10';
export const DATEV_TABLE = 'u_lod_bwd_buchung_standard';
export const DATEV_FIELDS = ['abrechnung_zeitraum', 'pnr', 'la_eigene', 'bs_nr', 'bs_wert_butab'] as const;
/** The largest Personalnummer LODAS takes is 5 digits. */
export const DATEV_MAX_PERSONNEL_NUMBER_LENGTH = 5;

const BEARBEITUNGSSCHLUESSEL = { hours: '1', days: '2' } as const;
const CRLF = '\r\n';

export interface DatevHeader {
  consultantNumber: string;
  clientNumber: string;
  period: Period;
}

/** DD/MM/YYYY, the `Datumsformat=TT/MM/JJJJ` the header declares. */
function datevDate(isoDate: string): string {
  const [year, month, day] = isoDate.split('-');
  return `${day}/${month}/${year}`;
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
    'Feldtrennzeichen=;',
    'Zahlenkomma=,',
    'Datumsformat=TT/MM/JJJJ',
    'Kommentarzeichen=*',
    `* Lohndaten ${period.label.slice(5)}/${period.label.slice(0, 4)} aus hr: Stunden mit Bearbeitungsschlüssel 1, Tage mit 2`,
    '',
    '[Satzbeschreibung]',
    `${DATEV_RECORD_TYPE};${DATEV_TABLE};${DATEV_FIELDS.map((field) => `${field}#bwd`).join(';')};`,
    '',
    '[Bewegungsdaten]',
    '',
  ].join(CRLF);
}

export function datevLine(row: PayrollRow, period: Period): string {
  const value = row.quantity.replace('.', ',');
  return `${DATEV_RECORD_TYPE};${datevDate(period.first)};${row.personnel_number};${row.wage_type};${BEARBEITUNGSSCHLUESSEL[row.unit]};${value};${CRLF}`;
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
      callback(null, encode(text + datevLine(row, header.period)));
    },
    flush(callback: TransformCallback) {
      callback(null, started ? undefined : encode(datevPreamble(header)));
    },
  });
}
