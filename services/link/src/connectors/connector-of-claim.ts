import { confirmDurable, type Sql } from '@msp/events';
import { connectorJson } from './connectors.routes';
import type { ConnectorsRepository } from './connectors.repository';

/**
 * What a `POST /connectors` holding an Idempotency-Key claim committed, for a retry whose first
 * request's instance died before storing its answer. A connector records no event for the events'
 * effectOfClaim to find, so the claim is kept on the connector itself; the answer is the connector
 * as the API shows it, once it would survive a failover.
 */
export function connectorOfClaim(connectors: ConnectorsRepository, sql: Sql) {
  return async (claim: string): Promise<{ resourceId: string; object: unknown } | undefined> => {
    const connector = await connectors.findByIdempotencyClaim(claim);
    if (!connector) return undefined;
    await confirmDurable(sql, claim);
    return { resourceId: connector.id, object: connectorJson(connector) };
  };
}
