import {
  OutboundBlockedError,
  OutboundResponseTooLargeError,
  OutboundTimeoutError,
  type Outbound,
} from '@msp/outbound';

/**
 * A SCIM 2.0 client (RFC 7643 resources, RFC 7644 protocol) of one service provider. It knows the
 * calls link makes: read every User and Group page by page, and the account changes onboarding and
 * offboarding need. Every failure is a ScimError that says whether trying again can help and what
 * a technician should look at; the bearer token never appears in one.
 */

export const SCIM_USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_ENTERPRISE_USER_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SCIM_CONTENT_TYPE = 'application/scim+json';

export type ScimErrorKind =
  | 'network'
  | 'timeout'
  | 'rate_limited'
  | 'server'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'rejected'
  | 'invalid_response'
  | 'blocked';

export class ScimError extends Error {
  constructor(
    message: string,
    readonly kind: ScimErrorKind,
    /** Network, timeout, 429 and 5xx: the same call may succeed later. */
    readonly retryable: boolean,
    readonly status?: number,
    /** What the directory asked for in Retry-After, in milliseconds. */
    readonly retryAfterMs?: number,
    /** The SCIM error's `scimType` (RFC 7644 §3.12), e.g. `invalidFilter`. */
    readonly scimType?: string,
  ) {
    super(message);
    this.name = 'ScimError';
  }
}

export interface ScimUser {
  id: string;
  externalId?: string;
  userName: string;
  displayName?: string;
  name?: { givenName?: string; familyName?: string; formatted?: string };
  emails?: { value?: string; primary?: boolean; type?: string }[];
  active?: boolean;
  groups?: { value?: string; display?: string }[];
  [SCIM_ENTERPRISE_USER_SCHEMA]?: { department?: string; manager?: { value?: string } };
}

export interface ScimGroup {
  id: string;
  displayName: string;
  members?: { value?: string; display?: string }[];
}

export interface NewScimUser {
  userName: string;
  givenName: string;
  familyName: string;
  email: string;
  department: string;
  active?: boolean;
  title?: string;
}

export interface ScimClientOptions {
  /** The service provider's base URL, e.g. https://scim.example.com/scim/v2. */
  baseUrl: string;
  bearerToken: string;
  outbound: Outbound;
  /** How many resources to ask for per page; the directory may send fewer. */
  pageSize?: number;
  /** Aborts every call (a stopping worker). */
  signal?: AbortSignal;
}

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3), in milliseconds from now. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A SCIM filter string literal (RFC 7644 §3.4.2.2): JSON string escaping. */
function filterLiteral(value: string): string {
  return JSON.stringify(value);
}

export type ScimClient = ReturnType<typeof createScimClient>;

export function createScimClient(options: ScimClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = safeOrigin(base);
  const pageSize = options.pageSize ?? 100;
  // Nothing a directory sends back (an echoed header, a detail) may carry the token onwards.
  const scrub = (text: string) => (options.bearerToken ? text.split(options.bearerToken).join('[redacted]') : text);

  async function call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: unknown; headers: Headers }> {
    const what = `${method} ${path.split('?')[0]}`;
    let response: Response;
    try {
      response = await options.outbound.fetch(`${base}${path}`, {
        method,
        signal: options.signal,
        headers: {
          authorization: `Bearer ${options.bearerToken}`,
          accept: `${SCIM_CONTENT_TYPE}, application/json`,
          ...(body === undefined ? {} : { 'content-type': SCIM_CONTENT_TYPE }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw transportError(error, what);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw transportError(error, what);
    }
    if (response.ok) {
      if (!text) return { status: response.status, json: undefined, headers: response.headers };
      try {
        return { status: response.status, json: JSON.parse(text), headers: response.headers };
      } catch {
        throw new ScimError(
          `the directory at ${origin} answered ${what} with something that is not JSON: is base_url the SCIM endpoint?`,
          'invalid_response',
          false,
          response.status,
        );
      }
    }
    throw statusError(response, what, scimErrorBody(text));
  }

  function transportError(error: unknown, what: string): ScimError {
    if (error instanceof ScimError) return error;
    if (error instanceof OutboundBlockedError)
      return new ScimError(`the connector may not call ${origin}: ${error.message}`, 'blocked', false);
    if (error instanceof OutboundResponseTooLargeError) {
      return new ScimError(
        `the directory at ${origin} answered ${what} with more than ${error.maxBytes / 1024 / 1024} MB, more ` +
          'than link reads in one answer; lower the page size the directory allows or check base_url',
        'invalid_response',
        false,
      );
    }
    if (error instanceof OutboundTimeoutError || (error instanceof Error && error.name === 'TimeoutError')) {
      return new ScimError(`the directory at ${origin} did not answer ${what} within the timeout`, 'timeout', true);
    }
    const cause =
      error instanceof Error ? ((error.cause as { code?: string } | undefined)?.code ?? error.message) : String(error);
    return new ScimError(
      `the directory at ${origin} could not be reached for ${what} (${scrub(String(cause))})`,
      'network',
      true,
    );
  }

  function statusError(
    response: Response,
    what: string,
    { detail, scimType }: { detail?: string; scimType?: string },
  ): ScimError {
    const status = response.status;
    const said = detail ? `: "${scrub(detail).slice(0, 300)}"` : '';
    if (status === 401)
      return new ScimError(
        `the directory at ${origin} refused the bearer token (401) on ${what}${said}; set a valid config.bearer_token on the connector`,
        'unauthorized',
        false,
        status,
      );
    if (status === 403)
      return new ScimError(
        `the directory at ${origin} does not let this bearer token do ${what} (403)${said}; grant the token the needed rights`,
        'forbidden',
        false,
        status,
      );
    if (status === 404)
      return new ScimError(
        `the directory at ${origin} has no ${what.split(' ')[1]} (404)${said}; check the connector's base_url`,
        'not_found',
        false,
        status,
      );
    if (status === 429) {
      return new ScimError(
        `the directory at ${origin} is rate limiting (429) ${what}${said}`,
        'rate_limited',
        true,
        status,
        parseRetryAfter(response.headers.get('retry-after')),
      );
    }
    if (status >= 500) {
      return new ScimError(
        `the directory at ${origin} failed (${status}) on ${what}${said}`,
        'server',
        true,
        status,
        parseRetryAfter(response.headers.get('retry-after')),
      );
    }
    const type = scimType ? ` ${scimType}` : '';
    return new ScimError(
      `the directory at ${origin} rejected ${what} (${status}${type})${said}`,
      'rejected',
      false,
      status,
      undefined,
      scimType,
    );
  }

  /**
   * Every resource of an endpoint, one page per yield. The directory decides the page size; the
   * next page starts after what it sent, until `totalResults` is reached. A directory that sends
   * an empty page before that, or no usable totals, ends the listing with an error rather than a
   * loop or a silently partial mirror.
   */
  async function* listAll<T>(endpoint: '/Users' | '/Groups', extraQuery = ''): AsyncGenerator<T[]> {
    let startIndex = 1;
    const seen = new Set<string>();
    for (;;) {
      const { json } = await call('GET', `${endpoint}?startIndex=${startIndex}&count=${pageSize}${extraQuery}`);
      const page = json as { totalResults?: unknown; Resources?: unknown } | undefined;
      const total = page?.totalResults;
      if (typeof total !== 'number' || !Number.isInteger(total) || total < 0) {
        throw new ScimError(
          `the directory at ${origin} answered GET ${endpoint} without a valid totalResults: is base_url the SCIM endpoint?`,
          'invalid_response',
          false,
        );
      }
      const resources = page?.Resources === undefined ? [] : page.Resources;
      if (!Array.isArray(resources))
        throw new ScimError(
          `the directory at ${origin} answered GET ${endpoint} with Resources that is not a list`,
          'invalid_response',
          false,
        );
      // A page of nothing but resources already sent: the directory ignores startIndex, and the
      // listing would silently stay at its first page.
      const fresh = resources.filter((resource) => !seen.has((resource as { id?: string })?.id ?? ''));
      if (resources.length && !fresh.length) {
        throw new ScimError(
          `the directory at ${origin} answered GET ${endpoint} at startIndex ${startIndex} with resources it had ` +
            'already sent: it ignores startIndex, so its listing cannot be read completely',
          'invalid_response',
          false,
        );
      }
      for (const resource of resources) seen.add((resource as { id?: string })?.id ?? '');
      if (resources.length) yield resources as T[];
      startIndex += resources.length;
      if (startIndex > total) return;
      if (!resources.length) {
        throw new ScimError(
          `the directory at ${origin} said GET ${endpoint} has ${total} results but sent an empty page at startIndex ${startIndex}; the listing is incomplete`,
          'invalid_response',
          true,
        );
      }
    }
  }

  async function findOne<T>(endpoint: '/Users' | '/Groups', filter: string): Promise<T | null> {
    const { json } = await call('GET', `${endpoint}?filter=${encodeURIComponent(filter)}&startIndex=1&count=2`);
    const resources = (json as { Resources?: T[] } | undefined)?.Resources ?? [];
    return resources[0] ?? null;
  }

  /** `&filter=…` of a listing, or nothing. */
  const filterQuery = (filter?: string) => (filter ? `&filter=${encodeURIComponent(filter)}` : '');

  return {
    /** Every User, or with `filter` only the matching ones (a delta: `meta.lastModified gt "…"`). */
    listUsers: (filter?: string) => listAll<ScimUser>('/Users', filterQuery(filter)),
    // Members are what the mirror's `groups` is made of; excludedAttributes is not asked for.
    listGroups: (filter?: string) => listAll<ScimGroup>('/Groups', filterQuery(filter)),

    /**
     * What the directory says it supports (RFC 7644 §4), and when it answered by its own clock
     * (the HTTP Date header, RFC 9110 §6.6.1), null when it sent none.
     */
    async serviceProviderConfig(): Promise<{ filterSupported: boolean; date: Date | null }> {
      const { json, headers } = await call('GET', '/ServiceProviderConfig');
      const filter = (json as { filter?: { supported?: unknown } } | undefined)?.filter;
      const date = Date.parse(headers.get('date') ?? '');
      return { filterSupported: filter?.supported === true, date: Number.isNaN(date) ? null : new Date(date) };
    },

    async createUser(user: NewScimUser): Promise<{ id: string }> {
      const { json } = await call('POST', '/Users', {
        schemas: [SCIM_USER_SCHEMA, SCIM_ENTERPRISE_USER_SCHEMA],
        userName: user.userName,
        name: {
          givenName: user.givenName,
          familyName: user.familyName,
          formatted: `${user.givenName} ${user.familyName}`,
        },
        displayName: `${user.givenName} ${user.familyName}`,
        emails: [{ value: user.email, type: 'work', primary: true }],
        active: user.active ?? true,
        ...(user.title ? { title: user.title } : {}),
        [SCIM_ENTERPRISE_USER_SCHEMA]: { department: user.department },
      });
      const id = (json as { id?: unknown } | undefined)?.id;
      if (typeof id !== 'string' || !id)
        throw new ScimError(
          `the directory at ${origin} created the user ${user.userName} but answered without its id`,
          'invalid_response',
          false,
        );
      return { id };
    },

    async findUserByUserName(userName: string): Promise<{ id: string; active: boolean } | null> {
      const user = await findOne<ScimUser>('/Users', `userName eq ${filterLiteral(userName)}`);
      // Filters on userName are case-insensitive (RFC 7643 §4.1.1); the match must still be this user.
      if (!user || user.userName.toLowerCase() !== userName.toLowerCase()) return null;
      return { id: user.id, active: user.active !== false };
    },

    async findGroupByDisplayName(displayName: string): Promise<{ id: string } | null> {
      const group = await findOne<ScimGroup>('/Groups', `displayName eq ${filterLiteral(displayName)}`);
      return group && group.displayName === displayName ? { id: group.id } : null;
    },

    async addGroupMember(groupId: string, userId: string): Promise<void> {
      await call('PATCH', `/Groups/${encodeURIComponent(groupId)}`, {
        schemas: [PATCH_OP_SCHEMA],
        Operations: [{ op: 'add', path: 'members', value: [{ value: userId }] }],
      });
    },

    async deactivateUser(userId: string): Promise<void> {
      await call('PATCH', `/Users/${encodeURIComponent(userId)}`, {
        schemas: [PATCH_OP_SCHEMA],
        Operations: [{ op: 'replace', path: 'active', value: false }],
      });
    },

    async activateUser(userId: string): Promise<void> {
      await call('PATCH', `/Users/${encodeURIComponent(userId)}`, {
        schemas: [PATCH_OP_SCHEMA],
        Operations: [{ op: 'replace', path: 'active', value: true }],
      });
    },

    /** False when the directory no longer had the user (404). */
    async deleteUser(userId: string): Promise<boolean> {
      try {
        await call('DELETE', `/Users/${encodeURIComponent(userId)}`);
        return true;
      } catch (error) {
        if (error instanceof ScimError && error.status === 404) return false;
        throw error;
      }
    },

    // Movers: a profile PATCH and a member's removal.

    /** SCIM PATCH of the user: `title`, and the enterprise extension's `department` and `manager` (the manager's directory id); only what is given. */
    async updateUserProfile(
      userId: string,
      profile: { title?: string; department?: string; managerId?: string },
    ): Promise<void> {
      const Operations = [
        ...(profile.title !== undefined ? [{ op: 'replace', path: 'title', value: profile.title }] : []),
        ...(profile.department !== undefined
          ? [{ op: 'replace', path: `${SCIM_ENTERPRISE_USER_SCHEMA}:department`, value: profile.department }]
          : []),
        ...(profile.managerId !== undefined
          ? [{ op: 'replace', path: `${SCIM_ENTERPRISE_USER_SCHEMA}:manager`, value: { value: profile.managerId } }]
          : []),
      ];
      if (Operations.length === 0) return;
      await call('PATCH', `/Users/${encodeURIComponent(userId)}`, { schemas: [PATCH_OP_SCHEMA], Operations });
    },

    /** SCIM PATCH of the group: the user is no longer a member (nothing to do when they were not). */
    async removeGroupMember(groupId: string, userId: string): Promise<void> {
      await call('PATCH', `/Groups/${encodeURIComponent(groupId)}`, {
        schemas: [PATCH_OP_SCHEMA],
        Operations: [{ op: 'remove', path: `members[value eq ${filterLiteral(userId)}]` }],
      });
    },
  };
}

/** The `detail` and `scimType` of a SCIM error body (RFC 7644 §3.12), when there are. */
function scimErrorBody(text: string): { detail?: string; scimType?: string } {
  try {
    const body = JSON.parse(text) as { detail?: unknown; scimType?: unknown };
    return {
      detail: typeof body.detail === 'string' ? body.detail : undefined,
      scimType: typeof body.scimType === 'string' ? body.scimType : undefined,
    };
  } catch {
    return {};
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
