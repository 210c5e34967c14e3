import { createDeskClient } from './clients';
import type { components } from './generated/desk';
import { ProblemError } from './problem';

export type TokenResponse = components['schemas']['TokenResponse'];

export interface ClientCredentialsOptions {
  /** desk's API base URL, up to `/api/v1`: its token endpoint is `<deskUrl>/auth/token`. */
  deskUrl: string;
  clientId: string;
  clientSecret: string;
  /** A subset of the client's scopes; all of them when left out. */
  scope?: string | string[];
  /** Service clients only: the tenant the token is for. */
  tenantId?: string;
  fetch?: (input: Request) => Promise<Response>;
}

/** How long before its expiry a token is replaced, so a request never leaves with one about to lapse. */
const RENEW_BEFORE_MS = 60_000;

/** RFC 6749 §2.3.1: id and secret form-encoded, then as Basic's user and password. */
function basicCredentials(clientId: string, clientSecret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`, 'utf8').toString('base64')}`;
}

/** One client-credentials grant at desk's token endpoint; a refusal throws a ProblemError (its `problem.error` is OAuth's code). */
export async function requestToken(options: ClientCredentialsOptions): Promise<TokenResponse> {
  const desk = createDeskClient({ baseUrl: options.deskUrl, fetch: options.fetch });
  const scope = Array.isArray(options.scope) ? options.scope.join(' ') : options.scope;
  const { data, error, response } = await desk.POST('/auth/token', {
    headers: { Authorization: basicCredentials(options.clientId, options.clientSecret) },
    body: {
      grant_type: 'client_credentials',
      ...(scope ? { scope } : {}),
      ...(options.tenantId ? { tenant_id: options.tenantId } : {}),
    },
  });
  if (!data) throw new ProblemError(response, error);
  return data;
}

/**
 * A token source for the clients' `token` option: gets a token on first use, keeps it, and gets
 * a new one shortly before it expires. Concurrent requests share one token request.
 */
export function clientCredentials(options: ClientCredentialsOptions): () => Promise<string> {
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return () => {
    if (current && Date.now() < current.renewAt) return Promise.resolve(current.token);
    pending ??= requestToken(options)
      .then((issued) => {
        current = { token: issued.access_token, renewAt: Date.now() + issued.expires_in * 1000 - RENEW_BEFORE_MS };
        return issued.access_token;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}
