import { createHash } from 'node:crypto';
import type { Outbound } from '@msp/outbound';

/** A mailbox's XOAUTH2 settings as stored: the client secret sealed like the passwords (`@msp/secrets`). */
export interface StoredOAuth2 {
  token_url: string;
  client_id: string;
  scope: string | null;
  /** Sealed; null until one is given. */
  secret: string | null;
}

/** How long before its expiry a token is replaced: a minute, or half its life when it lives less than two. */
const refreshMarginMs = (lifetimeMs: number) => Math.min(60_000, lifetimeMs / 2);
/** A token endpoint that does not say how long its token lives: taken for this long. */
const DEFAULT_LIFETIME_MS = 3_600_000;

interface Cached {
  token: string;
  refreshAt: number;
}

/**
 * Access tokens of the client credentials grant (RFC 6749 §4.4) for XOAUTH2 logins, kept per
 * mailbox, endpoint, client and secret until shortly before they expire, then fetched anew. The
 * token endpoint is called through @msp/outbound (its rules, its timeout). Each instance keeps its
 * own tokens: a token is cheap, and none is ever stored.
 */
export function createOAuthTokens(outbound: Outbound) {
  /** By key; `owners` gives the keys of an owner, to forget its token after a refused login. */
  const cache = new Map<string, Cached>();
  const owners = new Map<string, string>();
  const pending = new Map<string, Promise<string>>();

  async function fetchToken(settings: StoredOAuth2, clientSecret: string, key: string): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: settings.client_id,
      client_secret: clientSecret,
    });
    if (settings.scope) form.set('scope', settings.scope);
    const response = await outbound.fetch(settings.token_url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: form.toString(),
    });
    const text = await response.text();
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Not JSON: said below by the status.
    }
    if (!response.ok || typeof body.access_token !== 'string' || !body.access_token) {
      const said =
        typeof body.error === 'string'
          ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`
          : 'no access_token';
      throw new Error(`The OAuth token endpoint answered ${response.status} (${said.slice(0, 300)}).`);
    }
    const lifetimeMs =
      typeof body.expires_in === 'number' && body.expires_in > 0
        ? body.expires_in * 1000
        : Number(body.expires_in) > 0
          ? Number(body.expires_in) * 1000
          : DEFAULT_LIFETIME_MS;
    cache.set(key, { token: body.access_token, refreshAt: Date.now() + lifetimeMs - refreshMarginMs(lifetimeMs) });
    return body.access_token;
  }

  return {
    /** A live token for `owner` (a mailbox and its side, `imap` or `smtp`); fetched when none is, or it is about to expire. */
    async accessToken(owner: string, settings: StoredOAuth2, clientSecret: string): Promise<string> {
      // A changed endpoint, client or secret is another key: its token is never the old one's.
      const key = createHash('sha256')
        .update(JSON.stringify([owner, settings.token_url, settings.client_id, settings.scope, clientSecret]))
        .digest('hex');
      owners.set(owner, key);
      const cached = cache.get(key);
      if (cached && Date.now() < cached.refreshAt) return cached.token;
      let running = pending.get(key);
      if (!running) {
        running = fetchToken(settings, clientSecret, key).finally(() => pending.delete(key));
        pending.set(key, running);
      }
      return running;
    },

    /** Drops `owner`'s token (a login refused it: revoked before its time); the next login fetches one. */
    forget(owner: string): void {
      const key = owners.get(owner);
      if (key) cache.delete(key);
    },
  };
}

export type OAuthTokens = ReturnType<typeof createOAuthTokens>;
