import { Type, type Static } from '@sinclair/typebox';
import { named, Nullable, strictObject } from '@msp/http';

/** Every category a timesheet entry or a leave can have, in the order the settings list them. */
export const WAGE_TYPE_KEYS = ['normal', 'overtime', 'on_call', 'travel', 'training', 'vacation', 'sick', 'unpaid', 'parental', 'special'] as const;
export type WageTypeKey = (typeof WAGE_TYPE_KEYS)[number];
export type WageTypes = Record<WageTypeKey, string>;

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

const wageTypes = (description: string) =>
  strictObject(Object.fromEntries(WAGE_TYPE_KEYS.map((key) => [key, wageType(key)])) as Record<WageTypeKey, ReturnType<typeof wageType>>, {
    description,
  });

const consultantNumber = Type.String({ pattern: '^[0-9]{4,7}$', description: 'DATEV Beraternummer of the payroll office: 4–7 digits.', examples: ['1234567'] });
const clientNumber = Type.String({ pattern: '^[0-9]{1,5}$', description: 'DATEV Mandantennummer of your company at that office: 1–5 digits.', examples: ['12345'] });

const EXAMPLE = {
  datev: { consultant_number: '1234567', client_number: '12345' },
  wage_types: DEFAULT_WAGE_TYPES,
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
        { additionalProperties: false, description: 'The numbers the DATEV export writes into `[Allgemein]`; `null` until set (there is no default).' },
      ),
      wage_types: wageTypes('The DATEV Lohnart each category is exported as; the documented defaults until your tenant saves its own.'),
    },
    {
      additionalProperties: false,
      description: 'How your payroll is exported: the DATEV numbers of your payroll office and the Lohnart of every category.',
      examples: [EXAMPLE, { datev: { consultant_number: null, client_number: null }, wage_types: DEFAULT_WAGE_TYPES }],
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
        { description: 'Both required; `null` clears a number (the DATEV export then answers 422 until it is set again).' },
      ),
      wage_types: wageTypes('All ten categories are required: the settings are replaced as a whole.'),
    },
    {
      description: 'The complete settings: a full replace, every field required (a missing field is a 400, nothing is changed).',
      examples: [EXAMPLE],
    },
  ),
);
export type PutPayrollSettingsBody = Static<typeof PutPayrollSettingsBody>;
