import { randomBytes } from 'node:crypto';
import { ALL_SCOPES } from '@msp/auth';
import { conflict, notFound, unprocessable, type PageRequest } from '@msp/http';
import { hashSecret } from '../auth/secrets';
import { unlessDuplicate } from '../db';
import type { ApiClient, ApiClientWithSecret, NewApiClient } from './api-client.schemas';
import type { ApiClientsAdminRepository } from './api-clients.repository';

const apiClientNotFound = () => notFound('No API client with this id exists in your tenant.');

/** 128 bits of randomness in the public id, 256 in the secret: neither can be guessed. */
const newClientId = () => `cli_${randomBytes(16).toString('hex')}`;
const newSecret = () => randomBytes(32).toString('base64url');

export function createApiClientsService(repository: ApiClientsAdminRepository) {
  /** A new client id and secret; only the secret's slow salted hash is stored. */
  async function newCredentials() {
    const secret = newSecret();
    return { clientId: newClientId(), secret, secretHash: await hashSecret(secret) };
  }

  return {
    list(tenantId: string, page: PageRequest) {
      return repository.list(tenantId, page);
    },

    async get(tenantId: string, id: string): Promise<ApiClient> {
      const client = await repository.findById(tenantId, id);
      if (!client) throw apiClientNotFound();
      return client;
    },

    /**
     * `callerScopes` are the scopes of the caller's access token, taken literally: `admin:tenant`
     * satisfies every scope for access, but a client grants only scopes it holds itself by name.
     */
    async create(tenantId: string, callerScopes: readonly string[], input: NewApiClient): Promise<ApiClientWithSecret> {
      const beyond = input.scopes.filter((scope) => !callerScopes.includes(scope));
      if (beyond.length) {
        throw unprocessable(`A client can grant only scopes its own token holds; not held: ${beyond.join(' ')}.`, {
          code: 'scope-not-held',
          errors: beyond.map(() => ({ field: 'scopes', message: 'scope not held by the caller' })),
        });
      }
      const { secret, ...credentials } = await newCredentials();
      const client = await repository.create(tenantId, {
        clientId: credentials.clientId,
        secretHash: credentials.secretHash,
        name: input.name,
        scopes: input.scopes,
      });
      return { ...client, client_secret: secret };
    },

    async delete(tenantId: string, id: string): Promise<void> {
      if (!(await repository.delete(tenantId, id))) throw apiClientNotFound();
    },

    async rotateSecret(tenantId: string, id: string, graceSeconds: number): Promise<ApiClientWithSecret> {
      const secret = newSecret();
      const client = await repository.rotateSecret(tenantId, id, await hashSecret(secret), graceSeconds);
      if (!client) throw apiClientNotFound();
      return { ...client, client_secret: secret };
    },

    /** The platform operator's `tenant:create`: a new tenant and its first client, holding every scope. */
    async createTenant(slug: string): Promise<{ tenant_id: string; client: ApiClientWithSecret }> {
      const { secret, clientId, secretHash } = await newCredentials();
      const created = await unlessDuplicate(
        repository.createTenant(slug, { clientId, secretHash, name: 'administrator', scopes: [...ALL_SCOPES] }),
        () => conflict(`The tenant slug "${slug}" is taken.`, { code: 'duplicate-tenant' }),
      );
      return { tenant_id: created.tenantId, client: { ...created.client, client_secret: secret } };
    },
  };
}

export type ApiClientsService = ReturnType<typeof createApiClientsService>;
