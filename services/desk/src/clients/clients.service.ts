import { changesBetween } from '@msp/events';
import { conflict, notFound, unprocessable, type PageRequest } from '@msp/http';
import { unlessDuplicate } from '../db';
import { isFreeMailDomain } from '../shared/free-mail-domains';
import type { Repositories, Store } from '../store';
import type { Client, ClientChanges, NewClient } from './client.schemas';

const clientNotFound = () => notFound('No client with this id exists in your tenant.');
const nameTaken = (name: string) => () =>
  conflict(`A client named "${name}" already exists in your tenant (names are compared case-insensitively).`, {
    code: 'duplicate-client',
  });

const domainTaken = () =>
  conflict("A domain of email_domains is already another client's in your tenant: a domain belongs to one client.", {
    code: 'email-domain-taken',
  });

/** Lower-cased, each once, sorted; a free-mail domain is a 422 (nobody owns gmail.com). */
function emailDomainsOf(domains: string[] | undefined): string[] | undefined {
  if (domains === undefined) return undefined;
  const lowered = [...new Set(domains.map((domain) => domain.toLowerCase()))].sort();
  const free = lowered.filter(isFreeMailDomain);
  if (free.length) {
    throw unprocessable(`email_domains holds free-mail domains, which no client can own: ${free.join(', ')}.`, {
      code: 'free-mail-domain',
      errors: free.map((domain) => ({ field: 'email_domains', message: `${domain} is a free-mail domain` })),
    });
  }
  return lowered;
}

/** sla_policy_id must name an SLA policy of the tenant (else 422); locked, so that it cannot be deleted before the client commits. */
async function assertPolicy(tx: Repositories, tenantId: string, policyId: string | null | undefined) {
  if (policyId && !(await tx.slaPolicies.findForUpdate(tenantId, policyId))) {
    const message = 'does not name an SLA policy of your tenant';
    throw unprocessable(`sla_policy_id ${message}.`, {
      code: 'unknown-reference',
      errors: [{ field: 'sla_policy_id', message }],
    });
  }
}

export function createClientsService(store: Store) {
  async function get(tenantId: string, id: string): Promise<Client> {
    const client = await store.clients.findById(tenantId, id);
    if (!client) throw clientNotFound();
    return client;
  }

  return {
    get,

    list(tenantId: string, page: PageRequest) {
      return store.clients.list(tenantId, page);
    },

    create(tenantId: string, input: NewClient): Promise<Client> {
      const domains = emailDomainsOf(input.email_domains);
      const created = store.transaction(async (tx) => {
        await assertPolicy(tx, tenantId, input.sla_policy_id);
        let client = await tx.clients.create(tenantId, { ...input, email_domains: undefined });
        if (domains?.length) {
          await unlessDuplicate(tx.clients.setEmailDomains(tenantId, client.id, domains), domainTaken);
          client = (await tx.clients.findById(tenantId, client.id))!;
        }
        await tx.events.record({
          type: 'client.created',
          tenantId,
          resourceType: 'client',
          resourceId: client.id,
          object: client,
        });
        return client;
      });
      return unlessDuplicate(created, nameTaken(input.name));
    },

    /** Asking for what the client already is changes nothing, not even `updated_at`, and records no event. */
    update(tenantId: string, id: string, changes: ClientChanges): Promise<Client> {
      const updated = store.transaction(async (tx) => {
        const client = await tx.clients.findForUpdate(tenantId, id);
        if (!client) throw clientNotFound();
        const domains = emailDomainsOf(changes.email_domains);
        const fields = { ...changes };
        delete fields.email_domains;
        const wanted = { ...client, ...fields, ...(domains ? { email_domains: domains } : {}) };
        if (Object.keys(changesBetween(client, wanted)).length === 0) return client;
        await assertPolicy(tx, tenantId, changes.sla_policy_id);
        if (domains) await unlessDuplicate(tx.clients.setEmailDomains(tenantId, id, domains), domainTaken);
        const after = await tx.clients.update(tenantId, id, fields);
        await tx.events.record({
          type: 'client.updated',
          tenantId,
          resourceType: 'client',
          resourceId: id,
          object: after,
          before: client,
        });
        return after;
      });
      return unlessDuplicate(updated, nameTaken(changes.name ?? ''));
    },
  };
}

export type ClientsService = ReturnType<typeof createClientsService>;
