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
 */
import { addBusinessMinutes, businessMinutesBetween, type BusinessCalendar } from '@msp/calendar';
import type { SlaTargets } from '../sla-policies/sla-policy.schemas';
import type { TicketStatus } from '../tickets/ticket-status';
import type { SlaTargetName } from './sla.schemas';

export type Priority = keyof SlaTargets;

export interface SlaClocks {
  calendar: BusinessCalendar | null;
  targets: SlaTargets;
  firstResponse: { dueAt: Date; completedAt: Date | null; breachedAt: Date | null };
  resolution: { dueAt: Date; completedAt: Date | null; stoppedAt: Date | null; pausedMinutes: number; breachedAt: Date | null };
}

const STOPPED: readonly TicketStatus[] = ['pending', 'resolved', 'closed'];
const DONE: readonly TicketStatus[] = ['resolved', 'closed'];

function firstResponseDue(clocks: Pick<SlaClocks, 'calendar' | 'targets'>, priority: Priority, createdAt: Date): Date {
  return addBusinessMinutes(clocks.calendar, createdAt, clocks.targets[priority].first_response_minutes);
}

function resolutionDue(clocks: Pick<SlaClocks, 'calendar' | 'targets'>, priority: Priority, createdAt: Date, pausedMinutes: number): Date {
  return addBusinessMinutes(clocks.calendar, createdAt, clocks.targets[priority].resolution_minutes + pausedMinutes);
}

/** The clocks of a ticket opened at `createdAt` under a policy's targets and calendar. */
export function startClocks(calendar: BusinessCalendar | null, targets: SlaTargets, priority: Priority, createdAt: Date): SlaClocks {
  const policy = { calendar, targets };
  return {
    calendar,
    targets,
    firstResponse: { dueAt: firstResponseDue(policy, priority, createdAt), completedAt: null, breachedAt: null },
    resolution: { dueAt: resolutionDue(policy, priority, createdAt, 0), completedAt: null, stoppedAt: null, pausedMinutes: 0, breachedAt: null },
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
  if (!firstResponse.breachedAt && firstResponse.dueAt < (firstResponse.completedAt ?? now)) {
    firstResponse.breachedAt = now;
    breached.push('first_response');
  }
  if (!resolution.breachedAt && resolution.dueAt < (resolution.stoppedAt ?? now)) {
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
  if (!clocks.resolution.completedAt) clocks.resolution.dueAt = resolutionDue(clocks, priority, createdAt, clocks.resolution.pausedMinutes);
}
