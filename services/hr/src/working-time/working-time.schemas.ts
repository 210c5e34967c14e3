import { Type, type Static } from '@sinclair/typebox';
import { DateOnly, named, stringEnum, strictObject, Uuid } from '@msp/http';
import { RequestDay } from '../day.schemas';
import { Warning } from '../timesheets/timesheet.schemas';
import { AVERAGE_MAX_MINUTES, AVERAGE_WORKING_DAYS, MIN_FREE_SUNDAYS } from './working-time-rules';

export const WorkingTimeQuery = strictObject({
  from: Type.Optional(
    RequestDay({
      description: "First day of the record, `YYYY-MM-DD`; 1 January of `to`'s year when left out.",
      examples: ['2026-01-01'],
    }),
  ),
  to: Type.Optional(
    RequestDay({
      description:
        'Last day of the record, `YYYY-MM-DD`: not before `from`, and before the same day a year after `from` (at most one year); today (UTC) when left out.',
      examples: ['2026-12-31'],
    }),
  ),
  format: Type.Optional(
    stringEnum(['json', 'csv'] as const, {
      default: 'json',
      description:
        '`json` (default): the whole record. `csv`: the days only, as a CSV file (RFC 4180, CRLF, header row, formula-looking cells neutralised).',
    }),
  ),
});
export type WorkingTimeQuery = Static<typeof WorkingTimeQuery>;

const minutes = (description: string) => Type.Integer({ description });

const Day = Type.Object(
  {
    date: DateOnly({ description: 'The day, `YYYY-MM-DD`.' }),
    worked_minutes: minutes('Working time of the day (standby is not working time).'),
    break_minutes: minutes('Breaks of at least 15 minutes between stretches of work (§4 ArbZG).'),
    standby_minutes: minutes('Standby (Rufbereitschaft): paid, not working time under the ArbZG.'),
    warnings: Type.Array(Warning, {
      description: "The day's warnings as stored with its timesheet (§4, §5, §9–§10 ArbZG).",
    }),
  },
  { additionalProperties: false },
);

const RECORD_WARNING_DESCRIPTION =
  `\`average_over_8_hours\`: over the 24 weeks ending at \`to\` the worked minutes average more than ${AVERAGE_MAX_MINUTES} (8 h) per Werktag (§3 ArbZG). ` +
  `\`too_few_free_sundays\`: fewer than ${MIN_FREE_SUNDAYS} Sundays of the calendar year of \`to\` are free of work (§11 (1) ArbZG).`;

export const WorkingTime = named(
  'WorkingTime',
  Type.Object(
    {
      employee_id: Uuid({ description: 'The employee.' }),
      from: DateOnly({ description: 'First day of the record.' }),
      to: DateOnly({ description: 'Last day of the record.' }),
      days: Type.Array(Day, { description: 'Every day from `from` to `to` that has a timesheet, in date order.' }),
      weeks: Type.Array(
        Type.Object(
          {
            week: Type.String({ description: 'ISO week, `YYYY-Www`.' }),
            worked_minutes: minutes("Worked minutes of the week's days inside `from`–`to`."),
            standby_minutes: minutes("Standby minutes of the week's days inside `from`–`to`."),
          },
          { additionalProperties: false },
        ),
        {
          description:
            'Every ISO week the record touches, in order, with its totals (weeks at either end count only their days inside the record).',
        },
      ),
      average: Type.Object(
        {
          from: DateOnly({ description: 'First day of the 24 weeks (168 days) ending at `to`.' }),
          to: DateOnly({ description: "Last day: the record's `to`." }),
          worked_minutes: minutes('Worked minutes of those 24 weeks.'),
          working_days: minutes(
            `Werktage in those weeks: Monday to Saturday, public holidays on them included, as §3 ArbZG counts them (always ${AVERAGE_WORKING_DAYS}).`,
          ),
          minutes_per_working_day: Type.Number({
            description: '`worked_minutes ÷ working_days`, two decimals; above 480 (8 h) gives `average_over_8_hours`.',
          }),
        },
        {
          additionalProperties: false,
          description:
            '§3 ArbZG: "Die werktägliche Arbeitszeit der Arbeitnehmer darf acht Stunden nicht ' +
            'überschreiten. Sie kann auf bis zu zehn Stunden nur verlängert werden, ' +
            'wenn innerhalb von sechs Kalendermonaten oder innerhalb von 24 Wochen im Durchschnitt acht ' +
            'Stunden werktäglich nicht überschritten werden." The 24 weeks ending at `to`.',
        },
      ),
      sundays: Type.Object(
        {
          year: Type.Integer({ description: 'The calendar year of `to`.' }),
          sundays: Type.Integer({ description: 'Its Sundays (52 or 53).' }),
          worked: Type.Integer({
            description: 'Sundays with a timesheet that has working time (standby alone is no work).',
          }),
          free: Type.Integer({ description: '`sundays − worked`; fewer than 15 gives `too_few_free_sundays`.' }),
        },
        {
          additionalProperties: false,
          description: '§11 (1) ArbZG: "Mindestens 15 Sonntage im Jahr müssen beschäftigungsfrei bleiben."',
        },
      ),
      warnings: Type.Array(
        Type.Object(
          {
            code: stringEnum(['average_over_8_hours', 'too_few_free_sundays'] as const, {
              description: RECORD_WARNING_DESCRIPTION,
            }),
            message: Type.String({ description: 'What is wrong, in words, with the paragraph.' }),
          },
          { additionalProperties: false },
        ),
        { description: "What only a span shows (the days' own warnings are in `days`)." },
      ),
    },
    {
      additionalProperties: false,
      description:
        'The working-time record an inspector asks for (§16 (2), §17 ArbZG): the days, the ISO weeks, the §3 average and the §11 Sundays.',
      examples: [
        {
          employee_id: '4c3b2a19-0f8e-4d7c-9b6a-5e4d3c2b1a09',
          from: '2026-11-02',
          to: '2026-11-08',
          days: [
            { date: '2026-11-02', worked_minutes: 540, break_minutes: 45, standby_minutes: 0, warnings: [] },
            {
              date: '2026-11-08',
              worked_minutes: 240,
              break_minutes: 0,
              standby_minutes: 120,
              warnings: [
                {
                  code: 'sunday_work',
                  message:
                    '2026-11-08 is a Sunday: work on Sundays is allowed only under the exceptions of §10 ArbZG (§9 ArbZG).',
                },
              ],
            },
          ],
          weeks: [{ week: '2026-W45', worked_minutes: 780, standby_minutes: 120 }],
          average: {
            from: '2026-05-25',
            to: '2026-11-08',
            worked_minutes: 66240,
            working_days: 144,
            minutes_per_working_day: 460,
          },
          sundays: { year: 2026, sundays: 52, worked: 38, free: 14 },
          warnings: [
            {
              code: 'too_few_free_sundays',
              message:
                '38 of the 52 Sundays of 2026 have work, so only 14 stay free; §11 (1) ArbZG requires at least 15.',
            },
          ],
        },
      ],
    },
  ),
);
export type WorkingTimeJson = Static<typeof WorkingTime>;

/**
 * The 200 answer in either format the route gives: the record as JSON, or (`format=csv`) its days as
 * a CSV file. One schema serves both content types of the response (each body matches one branch).
 */
export const WorkingTimeAnswer = Type.Union(
  [
    WorkingTime,
    Type.String({
      contentMediaType: 'text/csv',
      description: '`format=csv`: the days as RFC 4180 CSV (comma, CRLF, a header row), UTF-8.',
      examples: ['date,worked_minutes,break_minutes,standby_minutes,warnings\r\n2026-11-02,540,45,0,\r\n'],
    }),
  ],
  {
    description: 'The record as JSON (`format=json`, the default), or its days as a CSV file (`format=csv`).',
    examples: WorkingTime.examples as unknown[],
  },
);
