import { Type, type Static } from '@sinclair/typebox';
import { named, Nullable, strictObject } from '@msp/http';

/** Every category a timesheet entry or a leave can have, in the order the settings list them. */
export const WAGE_TYPE_KEYS = [
  'normal',
  'overtime',
  'on_call',
  'travel',
  'training',
  'standby',
  'vacation',
  'sick',
  'unpaid',
  'parental',
  'special',
] as const;
export type WageTypeKey = (typeof WAGE_TYPE_KEYS)[number];
export type WageTypes = Record<WageTypeKey, string>;
/** The DATEV Bearbeitungsschlüssel (bs_nr) each category is exported with. */
export type BsNumbers = Record<WageTypeKey, number>;

/**
 * Added after the first settings were saved: a PUT may leave them out (its default applies), so a
 * client written for the ten earlier categories keeps working.
 */
const OPTIONAL_WAGE_TYPE_KEYS: readonly WageTypeKey[] = ['standby'];

/** What each category's quantity counts: hours of timesheet entries, working days of leave. */
export const WAGE_TYPE_UNITS: Record<WageTypeKey, 'hours' | 'days'> = {
  normal: 'hours',
  overtime: 'hours',
  on_call: 'hours',
  travel: 'hours',
  training: 'hours',
  standby: 'hours',
  vacation: 'days',
  sick: 'days',
  unpaid: 'days',
  parental: 'days',
  special: 'days',
};

/**
 * DATEV's Bearbeitungsschlüssel: what a value of a Lohnart counts. 1 (hours) and 2 (days) are the
 * usual ones, but a payroll office may set up its Lohnarten with others, so each is a setting.
 */
export const DEFAULT_BS_NR = { hours: 1, days: 2 } as const;
export const DEFAULT_BS_NUMBERS = Object.fromEntries(
  WAGE_TYPE_KEYS.map((key) => [key, DEFAULT_BS_NR[WAGE_TYPE_UNITS[key]]]),
) as BsNumbers;

/**
 * Used until the tenant saves its own mapping, so the CSV export works on day one. DATEV LODAS has
 * no universal numbers for these (every payroll office defines its own "eigene Lohnarten"), so
 * these are a plain, recognisable numbering: hours in 10xx–14xx, paid and unpaid absence in 15xx–19xx.
 * A DATEV export with them only imports if the payroll office created the same Lohnarten.
 */
export const DEFAULT_WAGE_TYPES: WageTypes = {
  normal: '1000',
  overtime: '1100',
  on_call: '1200',
  travel: '1300',
  training: '1400',
  standby: '1250',
  vacation: '1500',
  sick: '1600',
  unpaid: '1700',
  parental: '1800',
  special: '1900',
};

const WAGE_TYPE_LABELS: Record<WageTypeKey, string> = {
  normal: 'hours of timesheet entries of category `normal`',
  overtime: 'hours of timesheet entries of category `overtime`',
  on_call: 'hours of timesheet entries of category `on_call`',
  travel: 'hours of timesheet entries of category `travel`',
  training: 'hours of timesheet entries of category `training`',
  standby:
    "hours of timesheet entries of category `standby` (Rufbereitschaft: paid, not working time; its own Lohnart, not `on_call`'s)",
  vacation: 'working days of approved `vacation` leave',
  sick: 'working days of approved `sick` leave',
  unpaid: 'working days of approved `unpaid` leave',
  parental: 'working days of approved `parental` leave',
  special: 'working days of approved `special` leave',
};

const wageType = (key: WageTypeKey) =>
  Type.String({
    pattern: '^[0-9]{1,4}$',
    description: `DATEV Lohnart (1–4 digits) for ${WAGE_TYPE_LABELS[key]}. Default \`${DEFAULT_WAGE_TYPES[key]}\`.`,
    examples: [DEFAULT_WAGE_TYPES[key]],
  });

const wageTypes = (description: string, optional: readonly WageTypeKey[] = []) =>
  strictObject(
    Object.fromEntries(
      WAGE_TYPE_KEYS.map((key) => [key, optional.includes(key) ? Type.Optional(wageType(key)) : wageType(key)]),
    ) as Record<WageTypeKey, ReturnType<typeof wageType>>,
    { description },
  );

const bsNr = (key: WageTypeKey) =>
  Type.Integer({
    minimum: 1,
    maximum: 9999,
    description:
      `DATEV Bearbeitungsschlüssel (bs_nr) for ${WAGE_TYPE_LABELS[key]}: a positive integer. ` +
      `Default \`${DEFAULT_BS_NUMBERS[key]}\` (1 for hours, 2 for days).`,
    examples: [DEFAULT_BS_NUMBERS[key]],
  });

const BS_NR_DESCRIPTION =
  'The DATEV Bearbeitungsschlüssel (`bs_nr`) each category is exported with in the DATEV file: what the value of its Lohnart counts. ' +
  'Defaults: 1 (hours) for the timesheet categories, 2 (days) for the leave types; payroll offices set up their Lohnarten differently, so each can be changed.';

const bsNumbers = (description: string, optional: boolean) =>
  strictObject(
    Object.fromEntries(WAGE_TYPE_KEYS.map((key) => [key, optional ? Type.Optional(bsNr(key)) : bsNr(key)])) as Record<
      WageTypeKey,
      ReturnType<typeof bsNr>
    >,
    { description },
  );

const consultantNumber = Type.String({
  pattern: '^[0-9]{4,7}$',
  description: 'DATEV Beraternummer of the payroll office: 4–7 digits.',
  examples: ['1234567'],
});
const clientNumber = Type.String({
  pattern: '^[0-9]{1,5}$',
  description: 'DATEV Mandantennummer of your company at that office: 1–5 digits.',
  examples: ['12345'],
});

const EXAMPLE = {
  datev: { consultant_number: '1234567', client_number: '12345' },
  wage_types: DEFAULT_WAGE_TYPES,
  bs_nr: DEFAULT_BS_NUMBERS,
};

export const PayrollSettings = named(
  'PayrollSettings',
  Type.Object(
    {
      datev: Type.Object(
        {
          consultant_number: Nullable(consultantNumber),
          client_number: Nullable(clientNumber),
        },
        {
          additionalProperties: false,
          description:
            'The numbers the DATEV export writes into `[Allgemein]`; `null` until set (there is no default).',
        },
      ),
      wage_types: wageTypes(
        'The DATEV Lohnart each category is exported as; the documented defaults until your tenant saves its own.',
      ),
      bs_nr: bsNumbers(BS_NR_DESCRIPTION, false),
    },
    {
      additionalProperties: false,
      description:
        'How your payroll is exported: the DATEV numbers of your payroll office, and the Lohnart and Bearbeitungsschlüssel of every category.',
      examples: [
        EXAMPLE,
        {
          datev: { consultant_number: null, client_number: null },
          wage_types: DEFAULT_WAGE_TYPES,
          bs_nr: DEFAULT_BS_NUMBERS,
        },
      ],
    },
  ),
);
export type PayrollSettingsJson = Static<typeof PayrollSettings>;

export const PutPayrollSettingsBody = named(
  'PutPayrollSettingsRequest',
  strictObject(
    {
      datev: strictObject(
        {
          consultant_number: Nullable(consultantNumber),
          client_number: Nullable(clientNumber),
        },
        {
          description:
            'Both required; `null` clears a number (the DATEV export then answers 422 until it is set again).',
        },
      ),
      wage_types: wageTypes(
        'Every category is required (the settings are replaced as a whole), except `standby`, added later: left out, it is its default `1250`.',
        OPTIONAL_WAGE_TYPE_KEYS,
      ),
      bs_nr: Type.Optional(
        bsNumbers(
          `${BS_NR_DESCRIPTION} Optional: a category left out (or the whole object) gets its default. Not a positive integer: 400.`,
          true,
        ),
      ),
    },
    {
      description:
        'The complete settings: a full replace (a missing `datev` or `wage_types` field is a 400, nothing is changed); `wage_types.standby` and `bs_nr` ' +
        'may be left out and then take their defaults.',
      examples: [EXAMPLE],
    },
  ),
);
export type PutPayrollSettingsBody = Static<typeof PutPayrollSettingsBody>;
