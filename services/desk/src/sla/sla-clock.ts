/*
 * The rules of a ticket's SLA clocks, without I/O: when each target is due, what a status move, a
 * public comment or a change of priority does to them, and which targets a moment finds breached.
 * Business time is @msp/calendar's; the clocks count on the calendar copied at the ticket's creation.
 *
 * - First response: due `first_response_minutes` after the creation; met by the first public comment
 *   (or by resolving the ticket, should none come before).
 * - Resolution: due `resolution_minutes` after the creation plus the business time the clock stood
 *   still: it stops when the ticket enters `pending`, `resolved` or `closed`, and resumes where it
 *   stopped when the ticket is worked on again (`open`, `in_progress`).
 * - A change of priority re-targets the targets not yet done from the creation (elapsed time kept).
 * - A running target past its due time is breached, once: `breachedAt` is set and stays.
 * - A due time the calendar cannot give (too few business hours within a century, or past the
 *   year 9999) is unknown (null): the clock runs without one and is never breached. Policies and
 *   calendars are checked against each other when written, so this is what is left over (a
 *   calendar closed on most of its open days, a resolution paused for decades); a ticket's write
 *   never fails on it.
 */
import {
  addBusinessMinutes,
  businessMinutesBetween,
  isBusinessTimeRangeError,
  weeklyBusinessMinutes,
  type BusinessCalendar,
} from '@msp/calendar';
import type { SlaTargets } from '../sla-policies/sla-policy.schemas';
import type { TicketStatus } from '../tickets/ticket-status';
import type { SlaTargetName } from './sla.schemas';

export type Priority = keyof SlaTargets;

/**
 * How many regular weeks of its calendar (its hours, no holiday, no closed day) a policy's target
 * may take: five years. A target past that is no service level, and its clock might find no due
 * time at all (a calendar open a minute a week and a year of minutes).
 */
export const TARGET_MAX_WEEKS = 260;

/**
 * The targets a calendar cannot reach within TARGET_MAX_WEEKS of its regular weeks, as the
 * problem document's `errors` (`targets.<priority>.<target>`); empty when every one fits. `null`
 * is 24×7, which every target fits.
 */
export function targetsBeyondCalendar(
  calendar: BusinessCalendar | null,
  targets: SlaTargets,
  calendarName = 'the calendar',
): { field: string; message: string }[] {
  if (calendar === null) return [];
  const weekly = weeklyBusinessMinutes(calendar);
  const most = weekly * TARGET_MAX_WEEKS;
  const errors: { field: string; message: string }[] = [];
  for (const [priority, target] of Object.entries(targets) as [Priority, SlaTargets[Priority]][]) {
    for (const name of ['first_response_minutes', 'resolution_minutes'] as const) {
      if (target[name] <= most) continue;
      errors.push({
        field: `targets.${priority}.${name}`,
        message:
          `${target[name]} business minutes would take more than ${TARGET_MAX_WEEKS} weeks (5 years) of ` +
          `${calendarName}, which is open ${weekly} minutes a week: at most ${most}`,
      });
    }
  }
  return errors;
}

export interface SlaClocks {
  calendar: BusinessCalendar | null;
  targets: SlaTargets;
  /** `dueAt` null: unknown, the calendar cannot give the target (see above). */
  firstResponse: { dueAt: Date | null; completedAt: Date | null; breachedAt: Date | null };
  resolution: {
    dueAt: Date | null;
    completedAt: Date | null;
    stoppedAt: Date | null;
    pausedMinutes: number;
    breachedAt: Date | null;
  };
}

const STOPPED: readonly TicketStatus[] = ['pending', 'resolved', 'closed'];
const DONE: readonly TicketStatus[] = ['resolved', 'closed'];

/** `minutes` business minutes after `from`, or null when the calendar cannot give them. */
function dueAfter(calendar: BusinessCalendar | null, from: Date, minutes: number): Date | null {
  try {
    return addBusinessMinutes(calendar, from, minutes);
  } catch (error) {
    if (isBusinessTimeRangeError(error)) return null;
    throw error;
  }
}

function firstResponseDue(
  clocks: Pick<SlaClocks, 'calendar' | 'targets'>,
  priority: Priority,
  createdAt: Date,
): Date | null {
  return dueAfter(clocks.calendar, createdAt, clocks.targets[priority].first_response_minutes);
}

function resolutionDue(
  clocks: Pick<SlaClocks, 'calendar' | 'targets'>,
  priority: Priority,
  createdAt: Date,
  pausedMinutes: number,
): Date | null {
  return dueAfter(clocks.calendar, createdAt, clocks.targets[priority].resolution_minutes + pausedMinutes);
}

/** The clocks of a ticket opened at `createdAt` under a policy's targets and calendar. */
export function startClocks(
  calendar: BusinessCalendar | null,
  targets: SlaTargets,
  priority: Priority,
  createdAt: Date,
): SlaClocks {
  const policy = { calendar, targets };
  return {
    calendar,
    targets,
    firstResponse: { dueAt: firstResponseDue(policy, priority, createdAt), completedAt: null, breachedAt: null },
    resolution: {
      dueAt: resolutionDue(policy, priority, createdAt, 0),
      completedAt: null,
      stoppedAt: null,
      pausedMinutes: 0,
      breachedAt: null,
    },
  };
}

/**
 * Targets whose due time passed while their clock ran (until `now`, or until it stopped) become
 * breached, once; answers those. The breach sweep finds the same with SQL (ticket-slas.repository).
 * A stopped clock can be past due when a change of priority moved its due time before the stop.
 */
export function settle(clocks: SlaClocks, now: Date): SlaTargetName[] {
  const breached: SlaTargetName[] = [];
  const { firstResponse, resolution } = clocks;
  if (
    !firstResponse.breachedAt &&
    firstResponse.dueAt !== null &&
    firstResponse.dueAt < (firstResponse.completedAt ?? now)
  ) {
    firstResponse.breachedAt = now;
    breached.push('first_response');
  }
  if (!resolution.breachedAt && resolution.dueAt !== null && resolution.dueAt < (resolution.stoppedAt ?? now)) {
    resolution.breachedAt = now;
    breached.push('resolution');
  }
  return breached;
}

/** The first public comment meets the first-response target. */
export function respond(clocks: SlaClocks, now: Date): void {
  clocks.firstResponse.completedAt ??= now;
}

/** A move of the ticket's status: stops, completes or resumes the clocks. */
export function moveStatus(clocks: SlaClocks, to: TicketStatus, priority: Priority, createdAt: Date, now: Date): void {
  const { resolution } = clocks;
  if (DONE.includes(to)) {
    respond(clocks, now);
    resolution.completedAt ??= now;
  }
  if (STOPPED.includes(to)) {
    resolution.stoppedAt ??= now;
    return;
  }
  if (resolution.stoppedAt) {
    // Back at work: the clock resumes where it stopped, so the due time moves by the business time it stood still.
    resolution.pausedMinutes += businessMinutesBetween(clocks.calendar, resolution.stoppedAt, now);
    resolution.stoppedAt = null;
    resolution.completedAt = null;
    resolution.dueAt = resolutionDue(clocks, priority, createdAt, resolution.pausedMinutes);
  }
}

/** A new priority: the targets not yet done count its minutes from the creation, with the elapsed (and paused) time kept. */
export function retarget(clocks: SlaClocks, priority: Priority, createdAt: Date): void {
  if (!clocks.firstResponse.completedAt) clocks.firstResponse.dueAt = firstResponseDue(clocks, priority, createdAt);
  if (!clocks.resolution.completedAt)
    clocks.resolution.dueAt = resolutionDue(clocks, priority, createdAt, clocks.resolution.pausedMinutes);
}
