import type { ClaimEffect } from '@msp/events';
import { publicMailbox, type MailboxesRepository } from './mailboxes.repository';

/**
 * The mailbox a `POST /mailboxes` holding an Idempotency-Key claim created, as the API shows it: a
 * mailbox records no event for the claim to be found on, so its row keeps the claim.
 */
export function mailboxOfClaim(mailboxes: MailboxesRepository) {
  return async (claim: string): Promise<ClaimEffect | undefined> => {
    const mailbox = await mailboxes.findByIdempotencyClaim(claim);
    return mailbox ? { resourceId: mailbox.id, object: publicMailbox(mailbox) } : undefined;
  };
}
