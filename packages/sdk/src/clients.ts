import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths as DeskPaths } from './generated/desk';
import type { paths as HrPaths } from './generated/hr';
import type { paths as LinkPaths } from './generated/link';

/** A bearer token, or a function answering a current one (see `clientCredentials`). */
export type TokenSource = string | (() => string | Promise<string>);

export interface ClientOptions {
  /** The service's API base URL, up to `/api/v1` (`https://desk.example.com/api/v1`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` with every request; leave it out for the token endpoint. */
  token?: TokenSource;
  /** Headers sent with every request (`X-Request-Id` is answered back and logged with it). */
  headers?: Record<string, string>;
  /** Replaces `globalThis.fetch` (a proxy agent, a test double). */
  fetch?: (input: Request) => Promise<Response>;
}

export type DeskClient = Client<DeskPaths>;
export type LinkClient = Client<LinkPaths>;
export type HrClient = Client<HrPaths>;

function bearer(token: TokenSource): Middleware {
  return {
    async onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
      return request;
    },
  };
}

// Paths are the documents' own (`/tickets/{id}`); every method answers `{ data, error, response }`
// typed from the operation: `data` for a 2xx, `error` (a problem document) otherwise.
function createServiceClient<Paths extends object>({ baseUrl, token, headers, fetch }: ClientOptions): Client<Paths> {
  const client = createClient<Paths>({ baseUrl: baseUrl.replace(/\/+$/, ''), headers, ...(fetch ? { fetch } : {}) });
  if (token !== undefined) client.use(bearer(token));
  return client;
}

/** The helpdesk (desk): tickets, comments, clients, users, time, SLAs, webhooks; and its token endpoint. */
export const createDeskClient = (options: ClientOptions): DeskClient => createServiceClient<DeskPaths>(options);

/** The integration service (link): managed tenants, directory connectors, onboarding, offboarding, moves. */
export const createLinkClient = (options: ClientOptions): LinkClient => createServiceClient<LinkPaths>(options);

/** HR (hr): employees, contracts, timesheets, leaves, time accounts, payroll export. */
export const createHrClient = (options: ClientOptions): HrClient => createServiceClient<HrPaths>(options);
