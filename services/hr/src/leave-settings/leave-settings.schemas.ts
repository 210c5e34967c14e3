import { Type, type Static } from '@sinclair/typebox';
import { named, strictObject } from '@msp/http';

// `MM-DD` of a day every year has (29 February is not one).
const MONTH_DAY = '^(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)$';

const carryOverExpiry = () =>
  Type.String({
    pattern: MONTH_DAY,
    description:
      '`MM-DD`: days carried over into a year expire at the end of this day of that year. Default `03-31`, the transfer period of §7 (3) BUrlG ' +
      '(31 March of the next year); a collective agreement may set another. 29 February is refused (not every year has it).',
    examples: ['03-31'],
  });
const allowNegative = () =>
  Type.Boolean({
    description:
      'Whether a `vacation` request may exceed the days left (default `false`: 422 `insufficient_leave_balance`).',
  });

export const LeaveSettings = named(
  'LeaveSettings',
  Type.Object(
    { carry_over_expiry: carryOverExpiry(), allow_negative_balance: allowNegative() },
    {
      additionalProperties: false,
      description: "Your tenant's leave rules.",
      examples: [{ carry_over_expiry: '03-31', allow_negative_balance: false }],
    },
  ),
);
export type LeaveSettingsJson = Static<typeof LeaveSettings>;

export const PutLeaveSettingsBody = named(
  'PutLeaveSettingsRequest',
  strictObject(
    { carry_over_expiry: carryOverExpiry(), allow_negative_balance: allowNegative() },
    {
      description: 'The complete settings: both fields required (a full replace).',
      examples: [{ carry_over_expiry: '03-31', allow_negative_balance: true }],
    },
  ),
);
export type PutLeaveSettingsBody = Static<typeof PutLeaveSettingsBody>;
