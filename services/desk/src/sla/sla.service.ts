import type { Repositories, Store } from '../store';
import type { Ticket } from '../tickets/ticket.schemas';
import type { PolicySnapshot } from '../sla-policies/sla-policies.repository';
import { moveStatus, respond, retarget, settle, startClocks } from './sla-clock';
import { SLA_TARGETS, type SlaTargetName } from './sla.schemas';

/** How many breaches one sweep transaction claims: small enough to keep its locks short. */
const CLAIM_BATCH = 100;

/**
 * The hooks by which tickets and comments drive the SLA clocks (sla-clock.ts has the rules), and
 * the breach sweep. Each runs in the caller's transaction, after the ticket is locked, and records
 * `ticket.sla_breached` there for a target it finds breached.
 */
export function createSlaService(store: Store) {
  async function recordBreaches(tx: Repositories, tenantId: string, ticket: Ticket, targets: SlaTargetName[]) {
    for (const target of targets) {
      await tx.events.record({
        type: 'ticket.sla_breached',
        tenantId,
        resourceType: 'ticket',
        resourceId: ticket.id,
        object: ticket,
        extra: { target },
      });
    }
  }

  return {
    /** The policy a new ticket of the client takes (its client's, else the default), or null. */
    policyFor(tx: Repositories, tenantId: string, clientId: string): Promise<PolicySnapshot | null> {
      return tx.slaPolicies.snapshotFor(tenantId, clientId);
    },

    /** Starts the clocks of a ticket just opened under `policy`; answers the ticket with its `sla`. */
    async onTicketCreated(tx: Repositories, tenantId: string, ticket: Ticket, policy: PolicySnapshot): Promise<Ticket> {
      const clocks = startClocks(policy.calendar, policy.targets, ticket.priority, new Date(ticket.created_at));
      await tx.ticketSlas.create({
        ...clocks,
        ticketId: ticket.id,
        ticketCreatedAt: new Date(ticket.created_at),
        tenantId,
        policyId: policy.policyId,
      });
      return { ...ticket, sla: await tx.ticketSlas.json(ticket.id) };
    },

    /**
     * A ticket changed (`after` as written, its `sla` still as before): a status move stops, completes
     * or resumes the clocks, a new priority re-targets them. Answers the ticket with its `sla` now.
     */
    async onTicketChanged(
      tx: Repositories,
      tenantId: string,
      before: Ticket,
      after: Ticket,
      now: Date,
    ): Promise<Ticket> {
      if (!before.sla || (before.status === after.status && before.priority === after.priority)) return after;
      const clocks = await tx.ticketSlas.findForUpdate(tenantId, before.id);
      if (!clocks) return after;
      const createdAt = new Date(before.created_at);
      const breached = settle(clocks, now);
      if (after.priority !== before.priority) retarget(clocks, after.priority, createdAt);
      if (after.status !== before.status) moveStatus(clocks, after.status, after.priority, createdAt, now);
      breached.push(...settle(clocks, now));
      await tx.ticketSlas.save(clocks);
      const ticket = { ...after, sla: await tx.ticketSlas.json(before.id) };
      await recordBreaches(tx, tenantId, ticket, breached);
      return ticket;
    },

    /** A comment with `internal: false` on the (locked) ticket: the first one meets the first-response target. */
    async onPublicComment(tx: Repositories, tenantId: string, ticket: Ticket, now: Date): Promise<void> {
      if (!ticket.sla || ticket.sla.first_response.completed_at) return;
      const clocks = await tx.ticketSlas.findForUpdate(tenantId, ticket.id);
      if (!clocks) return;
      const breached = settle(clocks, now);
      respond(clocks, now);
      await tx.ticketSlas.save(clocks);
      if (breached.length)
        await recordBreaches(tx, tenantId, { ...ticket, sla: await tx.ticketSlas.json(ticket.id) }, breached);
    },

    /**
     * Marks every running target past its due time as breached and records its `ticket.sla_breached`
     * in the same transaction: a claim and its event commit together, and a target once claimed
     * matches no later sweep, on any replica. Answers how many it found.
     */
    async sweepBreaches(): Promise<number> {
      let found = 0;
      for (const target of SLA_TARGETS) {
        for (;;) {
          const claimed = await store.transaction(async (tx) => {
            const due = await tx.ticketSlas.claimBreaches(target, CLAIM_BATCH);
            for (const { ticketId, tenantId } of due) {
              const ticket = await tx.tickets.findById(tenantId, ticketId);
              if (ticket) await recordBreaches(tx, tenantId, ticket, [target]);
            }
            return due.length;
          });
          found += claimed;
          if (claimed < CLAIM_BATCH) break;
        }
      }
      return found;
    },
  };
}

export type SlaService = ReturnType<typeof createSlaService>;
