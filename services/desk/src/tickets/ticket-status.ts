// The ticket status machine (docs/api.md, "Status machines"), the one place that knows which moves are legal and what
// each move does to the ticket's timestamps. A closed ticket is final: nothing about it changes any more.
import { statusMachine } from '@msp/http';

export const TICKET_STATUSES = ['open', 'in_progress', 'pending', 'resolved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

const NEXT: Record<TicketStatus, readonly TicketStatus[]> = {
  open: ['in_progress', 'pending', 'resolved', 'closed'],
  in_progress: ['open', 'pending', 'resolved'],
  pending: ['open', 'in_progress', 'resolved'],
  resolved: ['open', 'closed'],
  closed: [],
};

// The machine's questions (which moves, is it final) are answered by the kit's status machine, shared with hr's leaves.
export const { allowedTransitions, canTransition, isFinal } = statusMachine(NEXT);

/** The states in which a ticket is still being worked on, and so needs an active assignee. */
export const WORKING_STATUSES: readonly TicketStatus[] = ['open', 'in_progress', 'pending'];

export function isWorking(status: TicketStatus): boolean {
  return WORKING_STATUSES.includes(status);
}

export interface StatusTimestamps {
  resolvedAt?: Date | null;
  closedAt?: Date | null;
}

/**
 * What entering `to` from `from` does to the timestamps: resolving stamps `resolved_at`,
 * reopening clears it (the ticket is no longer resolved), closing stamps `closed_at` and keeps
 * the resolution time of a resolved ticket.
 */
export function timestampsFor(from: TicketStatus, to: TicketStatus, now: Date): StatusTimestamps {
  if (from === to) return {};
  switch (to) {
    case 'resolved':
      return { resolvedAt: now };
    case 'closed':
      return { closedAt: now };
    default:
      return from === 'resolved' ? { resolvedAt: null } : {};
  }
}
