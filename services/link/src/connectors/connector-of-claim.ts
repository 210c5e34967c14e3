import type { ClaimEffect } from '@msp/events';
import { connectorJson } from './connectors.routes';
import type { ConnectorsRepository } from './connectors.repository';

/**
 * The connector a `POST /connectors` holding an Idempotency-Key claim created, as the API shows it:
 * a connector records no event for the claim to be found on, so its row keeps the claim.
 */
export function connectorOfClaim(connectors: ConnectorsRepository) {
  return async (claim: string): Promise<ClaimEffect | undefined> => {
    const connector = await connectors.findByIdempotencyClaim(claim);
    return connector ? { resourceId: connector.id, object: connectorJson(connector) } : undefined;
  };
}
