import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import SCIMMYRouters, { SCIMMY } from 'scimmy-routers';

/**
 * A real SCIM 2.0 directory link did not write: SCIMMY (RFC 7643/7644 parsing, filters, PATCH,
 * ListResponse paging) behind scimmy-routers' Express routes, over an in-memory store. SCIMMY's
 * resource declarations are process-wide, so one directory per test file.
 */
export interface ScimDirectory {
  /** The base URL a connector gets (…/scim/v2). */
  baseUrl: string;
  bearerToken: string;
  users(): ScimUser[];
  groups(): ScimGroup[];
  /** `lastModified` backdates the resource (the directory's `meta.lastModified`; default now). */
  addGroup(displayName: string, lastModified?: Date): ScimGroup;
  addUser(user: {
    userName: string;
    active?: boolean;
    givenName?: string;
    familyName?: string;
    lastModified?: Date;
  }): ScimUser;
  /** What ServiceProviderConfig says of `filter.supported` (scimmy-routers sets true). */
  setFilterSupported(supported: boolean): void;
  /** List requests whose filter matches answer 400 invalidFilter (a directory that filters on some attributes only); null stops it. */
  refuseFilters(filter: RegExp | null): void;
  /** Every request the directory received, as "METHOD /path?query" with the query decoded. */
  requestLog(): string[];
  /** The next `times` requests matching method and path answer `status` instead (an outage). */
  failNext(method: string, path: RegExp, status: number, times?: number, headers?: Record<string, string>): void;
  /** Requests matching method and path wait until the returned function is called. */
  hold(method: string, path: RegExp): () => void;
  /** Runs `action` once, when a GET of `path` asks for the page at `startIndex`, before the directory answers it. */
  beforePage(path: RegExp, startIndex: number, action: () => void): void;
  /** A user listed before all others (as by a directory ordering its listing by creation, newest first). */
  addFirstUser(user: { userName: string }): ScimUser;
  /** Every request the directory received, as "METHOD /path". */
  requests(): string[];
  close(): Promise<void>;
}

export interface ScimUser {
  id: string;
  userName: string;
  active: boolean;
  name?: { givenName?: string; familyName?: string };
  emails?: { value: string; primary?: boolean; type?: string }[];
  [extension: string]: unknown;
}

export interface ScimGroup {
  id: string;
  displayName: string;
  members: { value: string; display?: string }[];
}

type Stored = Record<string, any>;

let declared = false;

export async function startScimDirectory(): Promise<ScimDirectory> {
  if (declared) throw new Error('one SCIM directory per test file (SCIMMY declarations are process-wide)');
  declared = true;
  const bearerToken = `scim-${randomBytes(16).toString('hex')}`;
  const users = new Map<string, Stored>();
  const groups = new Map<string, Stored>();
  const failures: { method: string; path: RegExp; status: number; left: number; headers: Record<string, string> }[] =
    [];
  const holds: { method: string; path: RegExp; release: Promise<void> }[] = [];
  const pageActions: { path: RegExp; startIndex: number; action: () => void }[] = [];
  const seen: string[] = [];
  const log: string[] = [];
  let refused: RegExp | null = null;

  const meta = (resourceType: string, at = new Date()) => ({
    resourceType,
    created: at.toISOString(),
    lastModified: at.toISOString(),
  });

  function declare(resource: any, store: Map<string, Stored>, resourceType: string, unique: string) {
    SCIMMY.Resources.declare(resource)
      .ingress((target: any, data: Stored) => {
        const clash = [...store.values()].find(
          (row) => String(row[unique]).toLowerCase() === String(data[unique]).toLowerCase() && row.id !== target.id,
        );
        if (clash) throw new SCIMMY.Types.Error(409, 'uniqueness', `${unique} ${data[unique]} is already taken`);
        if (target.id) {
          const existing = store.get(target.id);
          if (!existing)
            throw new SCIMMY.Types.Error(404, null as unknown as string, `Resource ${target.id} not found`);
          const updated = {
            ...data,
            id: target.id,
            meta: { ...existing.meta, lastModified: new Date().toISOString() },
          };
          store.set(target.id, updated);
          return updated;
        }
        const created = { ...data, id: randomUUID(), meta: meta(resourceType) };
        store.set(created.id, created);
        return created;
      })
      .egress((target: any) => {
        if (target.id) {
          const row = store.get(target.id);
          if (!row) throw new SCIMMY.Types.Error(404, null as unknown as string, `Resource ${target.id} not found`);
          return row;
        }
        const all = [...store.values()];
        return target.filter ? target.filter.match(all) : all;
      })
      .degress((target: any) => {
        if (!store.delete(target.id))
          throw new SCIMMY.Types.Error(404, null as unknown as string, `Resource ${target.id} not found`);
      });
  }
  // The enterprise extension (RFC 7643 §4.3) carries `department`; optional, as in most directories.
  SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false);
  declare(SCIMMY.Resources.User, users, 'User', 'userName');
  declare(SCIMMY.Resources.Group, groups, 'Group', 'displayName');

  const app = express();
  app.use(async (req, res, next) => {
    seen.push(`${req.method} ${req.path}`);
    log.push(`${req.method} ${decodeURIComponent(req.originalUrl)}`);
    const filter = typeof req.query.filter === 'string' ? req.query.filter : undefined;
    if (refused && filter && refused.test(filter)) {
      res
        .status(400)
        .type('application/scim+json')
        .send(
          JSON.stringify({
            schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
            status: '400',
            scimType: 'invalidFilter',
            detail: `Filtering on ${filter.split(' ')[0]} is not supported`,
          }),
        );
      return;
    }
    const before = pageActions.findIndex(
      (a) => req.method === 'GET' && a.path.test(req.path) && String(req.query.startIndex) === String(a.startIndex),
    );
    if (before >= 0) pageActions.splice(before, 1)[0]!.action();
    const hold = holds.find((h) => h.method === req.method && h.path.test(req.path));
    if (hold) await hold.release;
    const failure = failures.find((f) => f.left > 0 && f.method === req.method && f.path.test(req.path));
    if (failure) {
      failure.left -= 1;
      res
        .status(failure.status)
        .set(failure.headers)
        .type('application/scim+json')
        .send(
          JSON.stringify({
            schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
            status: String(failure.status),
            detail: 'Injected failure',
          }),
        );
      return;
    }
    next();
  });
  // startIndex and count are integers (RFC 7644 §3.4.2.4); SCIMMY ignores them when they arrive as
  // the strings Express parses, and would then answer every page with the first one.
  app.use((req, _res, next) => {
    const query: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
    for (const key of ['startIndex', 'count']) {
      const value = query[key];
      if (typeof value === 'string' && /^\d+$/.test(value)) query[key] = Number(value);
    }
    Object.defineProperty(req, 'query', { value: query });
    next();
  });
  app.use(
    '/scim/v2',
    new SCIMMYRouters({
      type: 'bearer',
      handler: (req) => {
        if (req.header('Authorization') !== `Bearer ${bearerToken}`) throw new Error('Authorization failed');
        return 'link';
      },
    }) as unknown as express.Router,
  );
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scim/v2`;

  const directory: ScimDirectory = {
    baseUrl,
    bearerToken,
    users: () => [...users.values()] as ScimUser[],
    groups: () => [...groups.values()] as ScimGroup[],
    addGroup(displayName, lastModified) {
      const group = {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
        id: randomUUID(),
        displayName,
        members: [],
        meta: meta('Group', lastModified),
      };
      groups.set(group.id, group);
      return group;
    },
    addUser(user) {
      const row = {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        id: randomUUID(),
        userName: user.userName,
        active: user.active ?? true,
        name: { givenName: user.givenName ?? 'Given', familyName: user.familyName ?? 'Family' },
        emails: [{ value: user.userName, primary: true, type: 'work' }],
        meta: meta('User', user.lastModified),
      };
      users.set(row.id, row);
      return row as ScimUser;
    },
    beforePage(path, startIndex, action) {
      pageActions.push({ path, startIndex, action });
    },
    addFirstUser(user) {
      const added = directory.addUser(user);
      const rest = [...users].filter(([id]) => id !== added.id);
      users.clear();
      users.set(added.id, added as unknown as Stored);
      for (const [id, row] of rest) users.set(id, row);
      return added;
    },
    failNext(method, path, status, times = 1, headers = {}) {
      failures.push({ method, path, status, left: times, headers });
    },
    hold(method, path) {
      let release!: () => void;
      const entry = { method, path, release: new Promise<void>((resolve) => (release = resolve)) };
      holds.push(entry);
      return () => {
        holds.splice(holds.indexOf(entry), 1);
        release();
      };
    },
    requests: () => [...seen],
    requestLog: () => [...log],
    setFilterSupported(supported) {
      SCIMMY.Config.set('filter', { supported, maxResults: 1000 });
    },
    refuseFilters(filter) {
      refused = filter;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return directory;
}
