import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid, named, stringEnum } from '@msp/http';

export const SLA_TARGET_STATUSES = ['running', 'paused', 'met', 'breached'] as const;
/**
 * The list filter's values: a ticket is `breached` when a target is, `met` when both are met, `running` while one runs
 * (`at_risk` if it is due soon), `paused` while only a paused resolution remains.
 */
export const SLA_LIST_STATUSES = ['breached', 'at_risk', 'running', 'paused', 'met'] as const;
export type SlaListStatus = (typeof SLA_LIST_STATUSES)[number];
export const SLA_TARGETS = ['first_response', 'resolution'] as const;
export type SlaTargetName = (typeof SLA_TARGETS)[number];

const TargetStatus = named(
  'SlaTargetStatus',
  stringEnum(SLA_TARGET_STATUSES, {
    description:
      '`running`: the clock runs. `paused`: the resolution clock stands still while the ticket is `pending`. `met`: done by `due_at`. ' +
      '`breached`: `due_at` passed first (a breach stands, even if the target is met later or a change of priority moves `due_at`).',
  }),
);

const Clock = (what: string, completion: string) =>
  Type.Object(
    {
      due_at: Nullable(
        DateTime({
          description:
            `When ${what} is due: the policy's minutes for the ticket's priority, counted on its calendar from the ticket's creation. ` +
            'Null when the calendar cannot give them (fewer business hours within a century than the target, or ' +
            'a due time past 9999-12-31): the clock runs without a due time and is never breached.',
        }),
      ),
      completed_at: Nullable(DateTime({ description: completion })),
      status: TargetStatus,
    },
    { additionalProperties: false },
  );

export const TicketSlaSchema = named(
  'TicketSla',
  Type.Object(
    {
      policy_id: Uuid({
        description:
          "The SLA policy the ticket was opened under (its client's, else the default); the ticket keeps a copy of its targets and calendar.",
      }),
      first_response: Clock(
        'the first public comment',
        'The first comment with `internal: false` (or the resolution, if none came before).',
      ),
      resolution: Clock(
        'the resolution',
        'When it was resolved or closed; null again after a reopening. Time spent `pending`, and resolved ' +
          'before a reopening, moves `due_at` later by the business time it lasted.',
      ),
    },
    {
      additionalProperties: false,
      description:
        "The ticket's SLA clocks; null when no policy applied at its creation. A change of " +
        'priority re-targets both from the creation, keeping the elapsed time.',
      examples: [
        {
          policy_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          first_response: {
            due_at: '2026-11-23T08:15:00.000Z',
            completed_at: '2026-11-23T08:02:11.000Z',
            status: 'met',
          },
          resolution: { due_at: '2026-11-23T15:15:00.000Z', completed_at: null, status: 'running' },
        },
      ],
    },
  ),
);
export type TicketSla = Static<typeof TicketSlaSchema>;

/** The ticket list's SLA parameters (GET /tickets). */
export const slaListQueryProperties = {
  sla_status: Type.Optional(
    stringEnum(SLA_LIST_STATUSES, {
      description:
        'Only tickets with SLA clocks in this state: `breached` (a target breached), `at_risk` ' +
        '(not breached, a running target due within `at_risk_minutes`), ' +
        '`running` (not breached, a target running; at-risk ones included), `paused` (only a paused resolution left), `met` (both targets met).',
    }),
  ),
  at_risk_minutes: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 525_600,
      default: 60,
      description: 'What `sla_status=at_risk` counts as due soon, in minutes from now.',
    }),
  ),
  sort: Type.Optional(
    stringEnum(['sla_due_at'] as const, {
      description:
        "`sla_due_at`: the next running SLA target's due time first (overdue ones at the top), tickets without one last; else newest first.",
    }),
  ),
};
export interface SlaListing {
  sla_status?: SlaListStatus;
  at_risk_minutes?: number;
  sort?: 'sla_due_at';
}
