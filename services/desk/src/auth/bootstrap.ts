import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ALL_SCOPES } from '@msp/auth';
import type { Logger } from '@msp/http';
import type { ApiClientsRepository } from './api-clients.repository';
import type { ServiceClientConfig } from '../config';
import { hashSecret } from './secrets';

export interface BootstrapSettings {
  NODE_ENV: string;
  BOOTSTRAP_CLIENT_ID?: string;
  BOOTSTRAP_CLIENT_SECRET?: string;
  BOOTSTRAP_TENANT: string;
  DEV_CLIENT_FILE?: string;
}

/** Several replicas start at once: the loser of a unique-key race simply tries again. */
async function once<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if ((error as { code?: string }).code !== 'P2002') throw error;
    return step();
  }
}

/** Ensures an API client with every scope exists in a tenant (creating the tenant too). */
export async function ensureApiClient(
  clients: ApiClientsRepository,
  input: { tenant: string; clientId: string; secret: string; name: string; scopes?: string[] },
) {
  const tenant = await once(() => clients.ensureTenant(input.tenant, input.tenant));
  const secretHash = await hashSecret(input.secret);
  const client = await once(() =>
    clients.upsert({
      tenantId: tenant.id,
      clientId: input.clientId,
      secretHash,
      name: input.name,
      scopes: input.scopes ?? [...ALL_SCOPES],
    }),
  );
  return { tenantId: tenant.id, client };
}

/**
 * SERVICE_CLIENTS: each exists on every start with exactly the configured secret and scopes and
 * no tenant (a rotated secret or narrowed scopes take effect at the next start).
 */
export async function ensureServiceClients(
  serviceClients: ServiceClientConfig[],
  clients: ApiClientsRepository,
  logger: Logger,
) {
  for (const entry of serviceClients) {
    const secretHash = await hashSecret(entry.client_secret);
    await once(() =>
      clients.upsert({ tenantId: null, clientId: entry.client_id, secretHash, name: 'service', scopes: entry.scopes }),
    );
    logger.info('service client ensured', { client_id: entry.client_id, scopes: entry.scopes.join(' ') });
  }
}

/**
 * BOOTSTRAP_CLIENT_ID/SECRET: that client exists, with every scope, on every start.
 * Neither, outside production: a development client is made once and its
 * secret shown once (stdout, not the log), and written to DEV_CLIENT_FILE.
 */
export async function bootstrapClients(settings: BootstrapSettings, clients: ApiClientsRepository, logger: Logger) {
  if (settings.BOOTSTRAP_CLIENT_ID && settings.BOOTSTRAP_CLIENT_SECRET) {
    await ensureApiClient(clients, {
      tenant: settings.BOOTSTRAP_TENANT,
      clientId: settings.BOOTSTRAP_CLIENT_ID,
      secret: settings.BOOTSTRAP_CLIENT_SECRET,
      name: 'bootstrap',
    });
    logger.info('bootstrap client ensured', {
      client_id: settings.BOOTSTRAP_CLIENT_ID,
      tenant: settings.BOOTSTRAP_TENANT,
    });
    return;
  }
  if (settings.NODE_ENV === 'production') {
    logger.warn('no BOOTSTRAP_CLIENT_ID/BOOTSTRAP_CLIENT_SECRET set; no API client was created');
    return;
  }
  const tenant = await once(() => clients.ensureTenant(settings.BOOTSTRAP_TENANT, settings.BOOTSTRAP_TENANT));
  if ((await clients.countInTenant(tenant.id)) > 0) return;
  const clientId = `dev-${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(24).toString('base64url');
  await ensureApiClient(clients, { tenant: settings.BOOTSTRAP_TENANT, clientId, secret, name: 'development' });
  logger.info('development client created', { client_id: clientId, tenant: settings.BOOTSTRAP_TENANT });
  process.stdout.write(
    `\n  Development API client (shown once; every scope, tenant ` +
      `"${settings.BOOTSTRAP_TENANT}"):\n    client_id:     ${clientId}\n    client_secret: ${secret}\n\n`,
  );
  if (settings.DEV_CLIENT_FILE) {
    fs.mkdirSync(path.dirname(settings.DEV_CLIENT_FILE), { recursive: true });
    fs.writeFileSync(
      settings.DEV_CLIENT_FILE,
      `${JSON.stringify({ client_id: clientId, client_secret: secret, tenant: settings.BOOTSTRAP_TENANT }, null, 2)}\n`,
      { mode: 0o600 },
    );
  }
}
