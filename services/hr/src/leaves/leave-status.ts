// The leave status machine, the one place that knows which moves are legal. A leave starts
// `requested`; it is approved or rejected, or its requester withdraws it (`cancelled`); an
// approved leave can still be cancelled. Rejected and cancelled are final: bringing one back
// could revive a leave that now overlaps another, so a new request is made instead.

import { statusMachine } from '@msp/http';

export const LEAVE_STATUSES = ['requested', 'approved', 'rejected', 'cancelled'] as const;
export type LeaveStatus = (typeof LEAVE_STATUSES)[number];

const NEXT: Record<LeaveStatus, readonly LeaveStatus[]> = {
  requested: ['approved', 'rejected', 'cancelled'],
  approved: ['cancelled'],
  rejected: [],
  cancelled: [],
};

/** The leaves that still hold their days: another leave of the user may not overlap them. */
export const BLOCKING_STATUSES: readonly LeaveStatus[] = ['requested', 'approved'];

// Which moves are legal and which states are final: the kit's status machine (desk's tickets use it too).
export const { allowedTransitions, canTransition, isFinal } = statusMachine(NEXT);
