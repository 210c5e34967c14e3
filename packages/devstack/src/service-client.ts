import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DevstackError } from './devstack-error';

/** link's own credential at desk: a desk service client, made once per data folder. */
export interface ServiceClientCredential {
  readonly client_id: string;
  readonly client_secret: string;
  readonly scopes: string;
}

export const LINK_SERVICE_CLIENT_ID = 'link';
/**
 * What link does at desk: read users (manager, offboarded user, successor), find a leaver's tickets,
 * write tickets and comments, and deactivate a leaver's user (DELETE /users/:id takes admin:tenant).
 */
export const LINK_SERVICE_CLIENT_SCOPES = 'read:users read:tickets write:tickets admin:tenant';

/** The saved scopes with every one link needs added: a file from before link needed more keeps working. */
function withNeededScopes(saved: string): string {
  const scopes = saved.split(/\s+/).filter(Boolean);
  for (const scope of LINK_SERVICE_CLIENT_SCOPES.split(' ')) if (!scopes.includes(scope)) scopes.push(scope);
  return scopes.join(' ');
}

export function serviceClientFileOf(dataRoot: string): string {
  return path.join(dataRoot, 'service-client.json');
}

/**
 * Reads `<data>/service-client.json`, or writes it with a fresh random secret on the first start,
 * so desk and link agree on the secret across restarts without anyone setting it.
 */
export function ensureServiceClientFile(dataRoot: string): ServiceClientCredential {
  const file = serviceClientFileOf(dataRoot);
  if (fs.existsSync(file)) {
    let saved: Partial<ServiceClientCredential>;
    try {
      saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ServiceClientCredential>;
    } catch {
      throw new DevstackError(`${file} is not valid JSON: delete it and start again (a new secret is generated)`);
    }
    if (
      typeof saved.client_id === 'string' &&
      typeof saved.client_secret === 'string' &&
      saved.client_secret.length >= 16
    ) {
      const credential = {
        client_id: saved.client_id,
        client_secret: saved.client_secret,
        scopes: withNeededScopes(typeof saved.scopes === 'string' ? saved.scopes : ''),
      };
      if (credential.scopes !== saved.scopes) writeCredential(file, credential);
      return credential;
    }
    throw new DevstackError(
      `${file} lacks client_id or client_secret: delete it and start again (a new secret is generated)`,
    );
  }
  const credential = {
    client_id: LINK_SERVICE_CLIENT_ID,
    client_secret: randomBytes(32).toString('base64url'),
    scopes: LINK_SERVICE_CLIENT_SCOPES,
  };
  fs.mkdirSync(dataRoot, { recursive: true });
  writeCredential(file, credential);
  return credential;
}

function writeCredential(file: string, credential: ServiceClientCredential): void {
  fs.writeFileSync(file, `${JSON.stringify(credential, null, 2)}\n`, { mode: 0o600 });
}

type Env = Record<string, string | undefined>;

/**
 * desk learns the client through SERVICE_CLIENTS, link its side through DESK_CLIENT_ID/SECRET and
 * DESK_API_URL. Values the caller set in the environment win (they configure it themselves).
 */
export function serviceClientEnv(
  serviceName: string,
  credential: ServiceClientCredential,
  deskApiUrl: string,
  baseEnv: Env,
): Env {
  if (serviceName === 'desk') {
    return baseEnv['SERVICE_CLIENTS'] ? {} : { SERVICE_CLIENTS: JSON.stringify([credential]) };
  }
  if (serviceName === 'link') {
    if (baseEnv['DESK_CLIENT_ID']) return baseEnv['DESK_API_URL'] ? {} : { DESK_API_URL: deskApiUrl };
    return {
      DESK_API_URL: baseEnv['DESK_API_URL'] || deskApiUrl,
      DESK_CLIENT_ID: credential.client_id,
      DESK_CLIENT_SECRET: credential.client_secret,
    };
  }
  return {};
}
