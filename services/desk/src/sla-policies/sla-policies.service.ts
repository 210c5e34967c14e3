import type { BusinessCalendar } from '@msp/calendar';
import { conflict, notFound, unprocessable, type PageRequest } from '@msp/http';
import { unlessDuplicate, unlessReferenced } from '../db';
import { TARGET_MAX_WEEKS, targetsBeyondCalendar } from '../sla/sla-clock';
import type { Repositories, Store } from '../store';
import type { NewSlaPolicy, SlaPolicy, SlaPolicyChanges, SlaTargets } from './sla-policy.schemas';

export const policyNotFound = () => notFound('No SLA policy with this id exists in your tenant.');
const nameTaken = (name: string) => () =>
  conflict(`An SLA policy named "${name}" already exists in your tenant (names are compared case-insensitively).`, {
    code: 'duplicate-sla-policy',
  });
const inUse = (clients: number) =>
  conflict(
    `${clients || 'Some'} client(s) name this SLA policy; set their sla_policy_id to another policy (or null) before deleting it.`,
    { code: 'sla-policy-in-use' },
  );

/**
 * calendar_id must name a calendar of the tenant (else 422), locked until the policy commits, so
 * that a change of its hours waits and then checks this policy too.
 */
async function assertCalendar(tx: Repositories, tenantId: string, calendarId: string | null | undefined) {
  if (!calendarId) return null;
  const calendar = await tx.calendars.findForUpdate(tenantId, calendarId);
  if (!calendar) {
    const message = 'does not name a calendar of your tenant';
    throw unprocessable(`calendar_id ${message}.`, {
      code: 'unknown-reference',
      errors: [{ field: 'calendar_id', message }],
    });
  }
  return calendar;
}

/** A policy's targets must be reachable on its calendar within TARGET_MAX_WEEKS of its regular weeks (else 422 naming each target). */
export function targetsBeyondCalendarProblem(errors: { field: string; message: string }[], detail: string) {
  return unprocessable(detail, {
    code: 'targets-beyond-calendar',
    errors,
    extensions: { max_weeks: TARGET_MAX_WEEKS },
  });
}

function assertTargetsReachable(calendar: (BusinessCalendar & { name: string }) | null, targets: SlaTargets) {
  const errors = targetsBeyondCalendar(calendar, targets, calendar ? `calendar "${calendar.name}"` : undefined);
  if (errors.length) {
    throw targetsBeyondCalendarProblem(
      [
        ...errors,
        {
          field: 'calendar_id',
          message: `has too few business hours a week for these targets (each must fit in ${TARGET_MAX_WEEKS} of its weeks)`,
        },
      ],
      'The calendar is open too few hours for these targets: a target must be reachable within ' +
        `${TARGET_MAX_WEEKS} weeks (5 years) of the calendar's business hours.`,
    );
  }
}

/** At most one default per tenant: a new default takes the place of the previous one, which records its change. */
async function unsetPreviousDefault(tx: Repositories, tenantId: string, exceptId?: string) {
  const previous = await tx.slaPolicies.findDefaultForUpdate(tenantId);
  if (!previous || previous.id === exceptId) return;
  const after = await tx.slaPolicies.update(tenantId, previous.id, { isDefault: false });
  await tx.events.record({
    type: 'sla_policy.updated',
    tenantId,
    resourceType: 'sla_policy',
    resourceId: previous.id,
    object: after,
    before: previous,
  });
}

export function createSlaPoliciesService(store: Store) {
  async function get(tenantId: string, id: string): Promise<SlaPolicy> {
    const policy = await store.slaPolicies.findById(tenantId, id);
    if (!policy) throw policyNotFound();
    return policy;
  }

  return {
    get,

    list(tenantId: string, page: PageRequest) {
      return store.slaPolicies.list(tenantId, page);
    },

    create(tenantId: string, input: NewSlaPolicy): Promise<SlaPolicy> {
      const created = store.transaction(async (tx) => {
        const calendar = await assertCalendar(tx, tenantId, input.calendar_id);
        assertTargetsReachable(calendar as (BusinessCalendar & { name: string }) | null, input.targets);
        if (input.is_default) await unsetPreviousDefault(tx, tenantId);
        const policy = await tx.slaPolicies.create(tenantId, {
          name: input.name,
          calendarId: input.calendar_id ?? null,
          isDefault: input.is_default ?? false,
          targets: input.targets,
        });
        await tx.events.record({
          type: 'sla_policy.created',
          tenantId,
          resourceType: 'sla_policy',
          resourceId: policy.id,
          object: policy,
        });
        return policy;
      });
      return unlessDuplicate(created, nameTaken(input.name));
    },

    /** Tickets opened before keep the copy they were opened with. Asking for what the policy already is changes nothing. */
    update(tenantId: string, id: string, changes: SlaPolicyChanges): Promise<SlaPolicy> {
      const updated = store.transaction(async (tx) => {
        const before = await tx.slaPolicies.findForUpdate(tenantId, id);
        if (!before) throw policyNotFound();
        const calendarId = changes.calendar_id === undefined ? before.calendar_id : changes.calendar_id;
        const calendar = await assertCalendar(tx, tenantId, calendarId);
        if (changes.calendar_id !== undefined || changes.targets !== undefined) {
          assertTargetsReachable(
            calendar as (BusinessCalendar & { name: string }) | null,
            changes.targets ?? before.targets,
          );
        }
        if (changes.is_default && !before.is_default) await unsetPreviousDefault(tx, tenantId, id);
        const after = await tx.slaPolicies.update(tenantId, id, {
          name: changes.name,
          calendarId: changes.calendar_id,
          isDefault: changes.is_default,
          targets: changes.targets,
        });
        await tx.events.record({
          type: 'sla_policy.updated',
          tenantId,
          resourceType: 'sla_policy',
          resourceId: id,
          object: after,
          before,
        });
        return after;
      });
      return unlessDuplicate(updated, nameTaken(changes.name ?? ''));
    },

    /** 409 while a client names it; tickets opened under it keep their copy. */
    delete(tenantId: string, id: string): Promise<void> {
      const deleted = store.transaction(async (tx) => {
        const policy = await tx.slaPolicies.findForUpdate(tenantId, id);
        if (!policy) throw policyNotFound();
        const clients = await tx.slaPolicies.clientsUsing(tenantId, id);
        if (clients > 0) throw inUse(clients);
        await tx.slaPolicies.delete(tenantId, id);
        await tx.events.record({
          type: 'sla_policy.deleted',
          tenantId,
          resourceType: 'sla_policy',
          resourceId: id,
          object: policy,
        });
      });
      return unlessReferenced(deleted, () => inUse(0));
    },
  };
}

export type SlaPoliciesService = ReturnType<typeof createSlaPoliciesService>;
