import { daysInMonth } from '../calendar';

/**
 * One line of the payroll export, as the database produces it: the quantity of one category of one
 * employee in the period, already mapped to the tenant's wage type and rounded to two decimals
 * (PostgreSQL's numeric text, e.g. `12.50`: exact, never a float).
 */
export interface PayrollRow {
  personnel_number: string;
  name: string;
  wage_type: string;
  category: string;
  quantity: string;
  unit: 'hours' | 'days';
}

/** A payroll period `YYYY-MM` and the days it spans. */
export interface Period {
  /** `YYYY-MM`, as asked. */
  label: string;
  /** First and last day, `YYYY-MM-DD`. */
  first: string;
  last: string;
}

export function periodOf(label: string): Period {
  const [year, month] = label.split('-').map(Number) as [number, number];
  const days = daysInMonth(year, month);
  return { label, first: `${label}-01`, last: `${label}-${String(days).padStart(2, '0')}` };
}
