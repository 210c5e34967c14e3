// The days, months and years hr takes: 1900–2199, on every route alike. An employment, its
// contracts, sheets, leaves and accounts fall well inside; outside, years of fewer than four
// digits or before the calendar's holidays make no sense for payroll, and each would meet a
// different edge (PostgreSQL has no year 0, Date writes years past 9999 with six digits, the
// holiday calendar starts at 1000). Refused by the schema that validates (400) and stated by the
// same schema in the OpenAPI: a `pattern` on the text that every validator understands, and the
// range in words.
import { Type, type SchemaOptions } from '@sinclair/typebox';
import { DateOnly } from '@msp/http';

export const FIRST_YEAR = 1900;
export const LAST_YEAR = 2199;
/**
 * A text that starts with a year starts with one of FIRST_YEAR–LAST_YEAR. Text that does not start
 * with four digits passes, so that a value that is no date at all gets the one error of its format
 * (`must be a valid date`), not that and this one.
 */
export const YEARS_PATTERN = '^(?:(?:19|20|21)[0-9]{2}|(?![0-9]{4}))';
const IN_YEARS = `Years ${FIRST_YEAR}–${LAST_YEAR} (else 400).`;

type Described = SchemaOptions & { description: string };

/** A day `YYYY-MM-DD` a request gives, in the years 1900–2199. */
export const RequestDay = (options: Described) =>
  DateOnly({ ...options, pattern: YEARS_PATTERN, description: `${options.description} ${IN_YEARS}` });

/** A month `YYYY-MM` a request gives, in the years 1900–2199. */
export const RequestMonth = (options: Described) =>
  Type.String({
    ...options,
    format: 'year-month',
    pattern: YEARS_PATTERN,
    description: `${options.description} ${IN_YEARS}`,
  });

/** A calendar year a request gives, 1900–2199. */
export const RequestYear = (options: Described) =>
  Type.Integer({
    ...options,
    minimum: FIRST_YEAR,
    maximum: LAST_YEAR,
    description: `${options.description} ${FIRST_YEAR}–${LAST_YEAR} (else 400).`,
  });
