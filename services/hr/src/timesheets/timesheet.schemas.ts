import { Type, type Static } from '@sinclair/typebox';
import {
  DateOnly,
  DateTime,
  EndTimeOfDay,
  keysetQueryProperties,
  named,
  pageQueryProperties,
  pageSchema,
  StartTimeOfDay,
  strictObject,
  stringEnum,
  Uuid,
} from '@msp/http';
import { RequestDay } from '../day.schemas';
import { TIMESHEET_CATEGORIES, WARNING_CODES } from './timesheet-rules';

// The most entries a day may have: every 15 minutes worked as its own entry is 96.
const MAX_ENTRIES = 96;

const category = () =>
  stringEnum(TIMESHEET_CATEGORIES, {
    description:
      'What the time was: `normal` work, `overtime`, `on_call` duty (Bereitschaftsdienst: working time), `travel`, `training`, or `standby` ' +
      '(Rufbereitschaft: reachable but free where to be; paid, but not working time, so it counts for none of §3, §4, §5, §9 ArbZG nor for ' +
      '`worked_minutes`). The payroll export sums hours per category, `standby` under its own wage type.',
  });

const EntryInput = named(
  'TimesheetEntryInput',
  strictObject(
    {
      start: StartTimeOfDay({
        description:
          "When the work started, `HH:MM` (00:00–23:59), local time of the contract's `time_zone`; a time the clocks skip that day is a 422.",
        examples: ['08:00'],
      }),
      end: EndTimeOfDay({
        description:
          "When the work ended, `HH:MM`, after `start`, local time of the contract's `time_zone`; `24:00` is midnight at the end of the day.",
        examples: ['12:00'],
      }),
      category: category(),
    },
    { description: 'One stretch of work.', examples: [{ start: '08:00', end: '12:00', category: 'normal' }] },
  ),
);

const entries = () =>
  Type.Array(EntryInput, {
    minItems: 1,
    maxItems: MAX_ENTRIES,
    description:
      `The day's stretches of work, 1–${MAX_ENTRIES}, in any order (stored sorted by \`start\`). They must not overlap. ` +
      'The gaps between working-time entries are the breaks; only gaps of at least 15 minutes count (§4 ArbZG). ' +
      'At most 600 minutes (10 h) of work a day (§3 ArbZG; `standby` does not count). A day ' +
      'without work has no timesheet (delete it) rather than an empty one.',
  });

const EXAMPLE_ENTRIES = [
  { start: '08:00', end: '12:00', category: 'normal' },
  { start: '12:30', end: '17:00', category: 'normal' },
];

const WARNING_DESCRIPTION =
  'Machine-readable kind of warning (ArbZG, Arbeitszeitgesetz; `standby` counts for none of them): ' +
  '`break_too_short`: over 6 h of work less than 30 min of break, or over 9 h less than 45 min, counting only breaks of at least 15 min (§4). ' +
  "`work_block_too_long`: more than 6 h of work in a row without a break of at least 15 min (§4), measured from the block's first start to its last end; " +
  'a gap under 15 min does not end a block, and work running over midnight (24:00 then 00:00 ' +
  'the next day) is one block, reported on both days with `other_date`. ' +
  "`rest_period_too_short`: less than 11 h between the end of one day's work and the start of " +
  'the next (§5), on both days, each naming the other in `other_date`. ' +
  '`sunday_work`: work on a Sunday (§9; §10 allows exceptions, so it is a warning). ' +
  "`holiday_work`: work on a public holiday of the state (`state`) of the employee's contract valid that day " +
  '(§9–§10; §10 allows exceptions, so it is a warning); no contract that day, no holiday warning.';

export const Warning = named(
  'TimesheetWarning',
  Type.Object(
    {
      code: stringEnum(WARNING_CODES, { description: WARNING_DESCRIPTION, examples: ['break_too_short'] }),
      message: Type.String({ description: 'What is wrong and what is missing, in words.' }),
      other_date: Type.Optional(
        DateOnly({
          description:
            'The neighbouring day the warning concerns too (`rest_period_too_short`, and a `work_block_too_long` over midnight), `YYYY-MM-DD`.',
          examples: ['2026-10-30'],
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'Something the sheet was recorded with but that needs attention. Warnings that depend on a neighbouring day (§4 blocks over midnight, §5 rest) ' +
        'are stored on both sheets and brought up to date when either day is recorded, changed or deleted.',
      examples: [
        {
          code: 'break_too_short',
          message:
            'Over 6 h of work needs 30 min of break (§4 ArbZG, counting only breaks of at least 15 min); 20 min recorded, 10 min missing.',
        },
        {
          code: 'rest_period_too_short',
          message:
            'Only 8 h of rest between the end of work on 2026-10-29 (24:00) and its start on 2026-10-30 (08:00); §5 ArbZG requires at least 11 h.',
          other_date: '2026-10-30',
        },
      ],
    },
  ),
);

const Entry = named(
  'TimesheetEntry',
  Type.Object(
    {
      start: Type.String({ description: 'Start, `HH:MM`.', examples: ['08:00'] }),
      end: Type.String({ description: 'End, `HH:MM` (`24:00` is the end of the day).', examples: ['12:00'] }),
      category: category(),
      minutes: Type.Integer({
        minimum: 1,
        description:
          "Real minutes from `start` to `end` in the contract's `time_zone` (00:00–24:00 is 1,380 on the day summer time begins, 1,500 on the day it ends).",
        examples: [240],
      }),
    },
    {
      additionalProperties: false,
      description: 'One stretch of work as stored.',
      examples: [{ start: '08:00', end: '12:00', category: 'normal', minutes: 240 }],
    },
  ),
);

export const Timesheet = named(
  'Timesheet',
  Type.Object(
    {
      id: Uuid({ description: "The timesheet's id." }),
      user_id: Uuid({ description: 'The helpdesk user whose day it is; an employee of your tenant.' }),
      date: DateOnly({ description: 'The working day, `YYYY-MM-DD`.' }),
      entries: Type.Array(Entry, { description: 'The stretches of work, sorted by `start`.' }),
      worked_minutes: Type.Integer({
        minimum: 0,
        description: 'Sum of the (real) minutes of the working-time entries (`standby` is not working time).',
      }),
      break_minutes: Type.Integer({
        minimum: 0,
        description:
          'Sum of the gaps between working-time entries that last at least 15 minutes (shorter interruptions are not breaks, §4 ArbZG).',
      }),
      warnings: Type.Array(Warning, {
        description:
          'What needs attention; empty when nothing does: `break_too_short`, `work_block_too_long` (§4 ArbZG), `rest_period_too_short` (§5), ' +
          '`sunday_work`, `holiday_work` (§9–§10). See TimesheetWarning.',
      }),
      created_at: DateTime({ description: 'When the sheet was recorded (UTC).' }),
      updated_at: DateTime({ description: 'When the entries last changed (UTC); `created_at` until then.' }),
    },
    {
      additionalProperties: false,
      description: "One user's working day.",
      examples: [
        {
          id: '0b4e4b8e-6f0e-4a53-9f4a-3c3f7d2a1c10',
          user_id: '5f1c2b7a-2d4e-4c8f-9b1a-7e6d5c4b3a29',
          date: '2026-10-29',
          entries: [
            { start: '08:00', end: '12:00', category: 'normal', minutes: 240 },
            { start: '12:20', end: '17:00', category: 'normal', minutes: 280 },
          ],
          worked_minutes: 520,
          break_minutes: 20,
          warnings: [
            {
              code: 'break_too_short',
              message:
                'Over 6 h of work needs 30 min of break (§4 ArbZG, counting only breaks of at least 15 min); 20 min recorded, 10 min missing.',
            },
          ],
          created_at: '2026-10-29T17:05:00.000Z',
          updated_at: '2026-10-29T17:05:00.000Z',
        },
      ],
    },
  ),
);
export type TimesheetJson = Static<typeof Timesheet>;

export const TimesheetPage = pageSchema('TimesheetPage', Timesheet);

export const CreateTimesheetBody = named(
  'CreateTimesheetRequest',
  strictObject(
    {
      user_id: Uuid({ description: 'The `user_id` of an employee of your tenant (else 422).' }),
      date: RequestDay({
        description: 'The working day, a real calendar day `YYYY-MM-DD`. One timesheet per user and day (else 409).',
        examples: ['2026-10-29'],
      }),
      entries: entries(),
    },
    { examples: [{ user_id: '5f1c2b7a-2d4e-4c8f-9b1a-7e6d5c4b3a29', date: '2026-10-29', entries: EXAMPLE_ENTRIES }] },
  ),
);
export type CreateTimesheetBody = Static<typeof CreateTimesheetBody>;

export const UpdateTimesheetBody = named(
  'UpdateTimesheetRequest',
  strictObject(
    {
      user_id: Type.Optional(
        Uuid({ description: 'May be sent back as it is; a different user is a 422 (it cannot change).' }),
      ),
      date: Type.Optional(
        RequestDay({ description: 'May be sent back as it is; a different day is a 422 (it cannot change).' }),
      ),
      entries: entries(),
    },
    {
      description:
        "Replaces the day's entries, checked exactly like a new sheet. `user_id` and `date` cannot change (delete the sheet and record another); " +
        'a client may send them back unchanged.',
      examples: [{ entries: EXAMPLE_ENTRIES }],
    },
  ),
);
export type UpdateTimesheetBody = Static<typeof UpdateTimesheetBody>;

export const ListTimesheetsQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  user_id: Type.Optional(Uuid({ description: "Only this user's sheets." })),
  from: Type.Optional(
    RequestDay({ description: 'Only days on or after this one, `YYYY-MM-DD`.', examples: ['2026-10-01'] }),
  ),
  to: Type.Optional(
    RequestDay({
      description: 'Only days on or before this one, `YYYY-MM-DD` (not before `from`).',
      examples: ['2026-10-31'],
    }),
  ),
});
export type ListTimesheetsQuery = Static<typeof ListTimesheetsQuery>;
