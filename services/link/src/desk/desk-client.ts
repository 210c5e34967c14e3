import type { Logger } from '@msp/http';

/**
 * link's client of desk's API. It authenticates with link's own service
 * credential and asks desk's token endpoint for a token of the tenant it acts for, never with the
 * caller's token: runs outlive the request that created them.
 */
export interface DeskClientSettings {
  /** desk's API base, e.g. http://localhost:3001/api/v1 (the token endpoint is `${apiUrl}/auth/token`). */
  apiUrl: string;
  clientId?: string;
  clientSecret?: string;
  /** Every call to desk gives up after this long (a hung desk is an outage, not a wait). */
  timeoutMs?: number;
  /** A token is renewed this long before it expires, so no call goes out with a dying one. */
  refreshMarginMs?: number;
}

export interface DeskUser {
  id: string;
  name: string;
  email: string;
  role: string;
  active: boolean;
}

export interface DeskTicket {
  id: string;
  number: number;
  title: string;
  status: string;
  category: string;
  client_id: string;
  assignee_id: string | null;
}

/** A ticket as read, with the ETag a conditional change (If-Match) must carry. */
export interface DeskTicketRead {
  ticket: DeskTicket;
  etag: string | undefined;
}

export interface NewDeskTicket {
  title: string;
  description: string;
  category: string;
  client_id: string;
  priority?: string;
}

/**
 * What went wrong talking to desk. `retryable`: desk was down, timed out or answered 5xx/429 —
 * trying later may succeed. Otherwise desk refused (4xx) and trying again will not help.
 */
export class DeskError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DeskError';
  }
}

export const isDeskError = (error: unknown): error is DeskError => error instanceof DeskError;

interface CachedToken {
  value: string;
  expiresAt: number;
}

const TICKETS_PAGE = 100;

function problemText(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const parts = [b.error_description ?? b.detail ?? b.title].filter((p) => typeof p === 'string') as string[];
    if (Array.isArray(b.errors)) {
      for (const e of b.errors as { field?: unknown; message?: unknown }[]) {
        if (typeof e?.field === 'string' && typeof e?.message === 'string') parts.push(`${e.field} ${e.message}`);
      }
    }
    if (parts.length) return parts.join('; ');
  }
  return 'no details';
}

export function createDeskClient(settings: DeskClientSettings, logger: Logger) {
  const apiUrl = settings.apiUrl.replace(/\/+$/, '');
  const timeoutMs = settings.timeoutMs ?? 10_000;
  const refreshMarginMs = settings.refreshMarginMs ?? 60_000;
  const tokens = new Map<string, CachedToken>();
  // One token request per tenant at a time: concurrent tasks of one tenant share it.
  const pending = new Map<string, Promise<string>>();

  const configured = Boolean(settings.clientId && settings.clientSecret);

  async function send(
    method: string,
    url: string,
    init: { headers?: Record<string, string>; body?: string },
  ): Promise<{ status: number; body: unknown; etag?: string }> {
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: init.headers,
        body: init.body,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      const reason =
        (error as Error).name === 'TimeoutError'
          ? `no answer within ${timeoutMs} ms`
          : `unreachable (${(error as Error).message})`;
      throw new DeskError(`desk is ${reason}: ${method} ${new URL(url).pathname}`, true);
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (a proxy's error page): the status alone classifies it.
    }
    return { status: response.status, body, etag: response.headers.get('etag') ?? undefined };
  }

  async function fetchToken(tenantId: string): Promise<string> {
    if (!configured) {
      throw new DeskError(
        'link has no credential for desk: set DESK_CLIENT_ID and DESK_CLIENT_SECRET (a service client configured on desk by SERVICE_CLIENTS).',
        false,
      );
    }
    const { status, body } = await send('POST', `${apiUrl}/auth/token`, {
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
        tenant_id: tenantId,
      }),
    });
    if (status === 200 && body && typeof (body as { access_token?: unknown }).access_token === 'string') {
      const { access_token, expires_in } = body as { access_token: string; expires_in?: number };
      const lifetimeMs = (typeof expires_in === 'number' ? expires_in : 3600) * 1000;
      tokens.set(tenantId, { value: access_token, expiresAt: Date.now() + lifetimeMs });
      return access_token;
    }
    const retryable = status >= 500 || status === 429 || status === 200;
    throw new DeskError(
      `desk refused link's service credential (token endpoint answered ${status}: ` +
        `${problemText(body)}); check DESK_CLIENT_ID/DESK_CLIENT_SECRET and desk's SERVICE_CLIENTS`,
      retryable,
      status,
    );
  }

  async function tokenFor(tenantId: string): Promise<string> {
    const cached = tokens.get(tenantId);
    if (cached && cached.expiresAt - refreshMarginMs > Date.now()) return cached.value;
    let inFlight = pending.get(tenantId);
    if (!inFlight) {
      inFlight = fetchToken(tenantId).finally(() => pending.delete(tenantId));
      pending.set(tenantId, inFlight);
    }
    return inFlight;
  }

  /** One authenticated call; a 401 means desk no longer accepts the cached token: one fresh try. */
  async function call(
    tenantId: string,
    method: string,
    path: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown; etag?: string }> {
    const attempt = async () => {
      const token = await tokenFor(tenantId);
      return send(method, `${apiUrl}${path}`, {
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: 'application/json',
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: payload === undefined ? undefined : JSON.stringify(payload),
      });
    };
    let result = await attempt();
    if (result.status === 401) {
      tokens.delete(tenantId);
      result = await attempt();
    }
    if (result.status >= 500 || result.status === 429) {
      throw new DeskError(
        `desk answered ${result.status} to ${method} ${path.split('?')[0]}: ${problemText(result.body)}`,
        true,
        result.status,
      );
    }
    return result;
  }

  function refused(method: string, path: string, result: { status: number; body: unknown }): DeskError {
    logger.warn('desk refused a call', { method, path: path.split('?')[0], status: result.status });
    return new DeskError(
      `desk refused ${method} ${path.split('?')[0]} (${result.status}): ${problemText(result.body)}`,
      false,
      result.status,
    );
  }

  return {
    /** Whether link has a desk credential at all (without it, no run can reach desk). */
    configured,

    /** The user, or null when desk knows no such user in the tenant. */
    async getUser(tenantId: string, userId: string): Promise<DeskUser | null> {
      const path = `/users/${encodeURIComponent(userId)}`;
      const result = await call(tenantId, 'GET', path);
      if (result.status === 404) return null;
      if (result.status !== 200) throw refused('GET', path, result);
      return result.body as DeskUser;
    },

    /** Every ticket of the assignee in the status, across desk's pages. */
    async listTickets(tenantId: string, filter: { assigneeId: string; status: string }): Promise<DeskTicket[]> {
      const all: DeskTicket[] = [];
      for (let page = 1; ; page += 1) {
        const query = new URLSearchParams({
          assignee_id: filter.assigneeId,
          status: filter.status,
          page: String(page),
          per_page: String(TICKETS_PAGE),
        });
        const path = `/tickets?${query.toString()}`;
        const result = await call(tenantId, 'GET', path);
        if (result.status !== 200) throw refused('GET', path, result);
        const body = result.body as { data: DeskTicket[]; pagination: { total_pages: number } };
        all.push(...body.data);
        if (page >= body.pagination.total_pages || body.data.length === 0) return all;
      }
    },

    /**
     * `ifMatch`: the ETag of the ticket as read; desk then changes it only if nobody has since
     * (else a DeskError with status 412: read it again and decide again).
     */
    async updateTicket(
      tenantId: string,
      ticketId: string,
      changes: Record<string, unknown>,
      options: { ifMatch?: string } = {},
    ): Promise<DeskTicket> {
      const path = `/tickets/${encodeURIComponent(ticketId)}`;
      const result = await call(
        tenantId,
        'PATCH',
        path,
        changes,
        options.ifMatch ? { 'If-Match': options.ifMatch } : {},
      );
      if (result.status !== 200) throw refused('PATCH', path, result);
      return result.body as DeskTicket;
    },

    /** The ticket and its ETag, or null when desk knows no such ticket in the tenant. */
    async getTicket(tenantId: string, ticketId: string): Promise<DeskTicketRead | null> {
      const path = `/tickets/${encodeURIComponent(ticketId)}`;
      const result = await call(tenantId, 'GET', path);
      if (result.status === 404) return null;
      if (result.status !== 200) throw refused('GET', path, result);
      return { ticket: result.body as DeskTicket, etag: result.etag };
    },

    /** A comment on the ticket; `idempotencyKey` as for createTicket, so a retried try adds it once. */
    async commentOnTicket(
      tenantId: string,
      ticketId: string,
      comment: { body: string; internal: boolean },
      options: { idempotencyKey?: string } = {},
    ): Promise<{ id: string }> {
      const path = `/tickets/${encodeURIComponent(ticketId)}/comments`;
      const headers: Record<string, string> = options.idempotencyKey
        ? { 'Idempotency-Key': `"${options.idempotencyKey}"` }
        : {};
      const result = await call(tenantId, 'POST', path, comment, headers);
      if (
        result.status === 409 &&
        (result.body as { type?: unknown } | undefined)?.type === 'urn:msp:problem:idempotency-key-in-use'
      ) {
        throw new DeskError(
          'desk is still adding this comment (an earlier try with the same Idempotency-Key has not finished)',
          true,
          409,
        );
      }
      if (result.status !== 201) throw refused('POST', path, result);
      return result.body as { id: string };
    },

    /**
     * Deactivates the user (desk's DELETE /users/:id: they can no longer sign in or be assigned).
     * false when desk answers 404: the user is already inactive, or unknown to the tenant, so there
     * is nothing left to do. It takes the scope admin:tenant, which link's service client must hold.
     */
    async deactivateUser(tenantId: string, userId: string): Promise<boolean> {
      const path = `/users/${encodeURIComponent(userId)}`;
      const result = await call(tenantId, 'DELETE', path);
      if (result.status === 204) return true;
      if (result.status === 404) return false;
      if (result.status === 403) {
        logger.warn('desk refused a call', { method: 'DELETE', path, status: 403 });
        throw new DeskError(
          `desk refused DELETE ${path} (403): ${problemText(result.body)}; grant link's service client the scope admin:tenant in desk's SERVICE_CLIENTS`,
          false,
          403,
        );
      }
      throw refused('DELETE', path, result);
    },

    /**
     * `idempotencyKey`: the same key for every try of one piece of work (desk's Idempotency-Key), so
     * a retry after an answer that came too late gets the ticket the first try opened, not a second.
     */
    async createTicket(
      tenantId: string,
      ticket: NewDeskTicket,
      options: { idempotencyKey?: string } = {},
    ): Promise<DeskTicket> {
      const headers: Record<string, string> = options.idempotencyKey
        ? { 'Idempotency-Key': `"${options.idempotencyKey}"` }
        : {};
      const result = await call(tenantId, 'POST', '/tickets', ticket, headers);
      // The first try with this key is still being answered: the ticket is desk's to finish, ask again later.
      if (
        result.status === 409 &&
        (result.body as { type?: unknown } | undefined)?.type === 'urn:msp:problem:idempotency-key-in-use'
      ) {
        throw new DeskError(
          'desk is still opening this ticket (an earlier try with the same Idempotency-Key has not finished)',
          true,
          409,
        );
      }
      if (result.status !== 201) throw refused('POST', '/tickets', result);
      return result.body as DeskTicket;
    },

    /** The client, or null when desk knows none of that id in the tenant (a dry run's check before a ticket). */
    async getClient(tenantId: string, clientId: string): Promise<{ id: string; name: string } | null> {
      const path = `/clients/${encodeURIComponent(clientId)}`;
      const result = await call(tenantId, 'GET', path);
      if (result.status === 404) return null;
      if (result.status !== 200) throw refused('GET', path, result);
      return result.body as { id: string; name: string };
    },
  };
}

export type DeskClient = ReturnType<typeof createDeskClient>;
