import type { Client, Entry } from 'ldapts';
import type { Outbound } from '@msp/outbound';
import { SCIM_ENTERPRISE_USER_SCHEMA, type ScimGroup, type ScimUser } from '../scim/scim-client';
import { LdapError, ldapErrorOf, openLdapSession, originOf } from './ldap-connection';
import { flavorOf } from './ldap-flavors';
import type { LdapSettings } from './ldap-settings';
import { createUserIds } from './ldap-user-ids';

/**
 * An `ldap` connector's directory (Active Directory or OpenLDAP): its health, and its users and
 * groups read page by page (the paged results control, RFC 2696) in the shape the mirror takes.
 * health() opens its own bound session; the calls of a sync share one, which close() ends.
 */

export interface LdapDirectoryOptions {
  url: string;
  settings: LdapSettings;
  bindPassword: string;
  outbound: Outbound;
  /** Entries per page (LDAP_PAGE_SIZE unless given). */
  pageSize?: number;
}

/**
 * Entries per page of a listing. AD serves up to its MaxPageSize (1,000) a page; ldapts keeps a
 * page's parsed messages until the page ends, so a smaller page bounds what one sync holds at once
 * for a round trip more per 500 entries.
 */
export const LDAP_PAGE_SIZE = 500;

const first = (value: Entry[string] | undefined): string | undefined => {
  const one = Array.isArray(value) ? value[0] : value;
  return typeof one === 'string' ? one : undefined;
};
const all = (value: Entry[string] | undefined): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
    (item): item is string => typeof item === 'string',
  );

/** The value of a DN's first RDN (`CN=VPN,OU=Groups,…` → `VPN`), unescaped. */
export function rdnValue(dn: string): string {
  const match = /^[^=]+=((?:\\.|[^,])*)/.exec(dn);
  return (match?.[1] ?? dn).replace(/\\(.)/g, '$1');
}

export type LdapDirectory = ReturnType<typeof createLdapDirectory>;

export function createLdapDirectory(options: LdapDirectoryOptions) {
  const { settings, outbound } = options;
  const flavor = flavorOf(settings.flavor);
  const origin = originOf(options.url);
  const pageSize = options.pageSize ?? LDAP_PAGE_SIZE;
  const endpoint = {
    url: options.url,
    startTls: settings.startTls,
    caCertificate: settings.caCertificate,
    bindDn: settings.bindDn,
    bindPassword: options.bindPassword,
  };

  async function withSession<T>(what: string, work: (client: Client) => Promise<T>): Promise<T> {
    const client = await openLdapSession(endpoint, outbound);
    try {
      return await work(client);
    } catch (error) {
      throw ldapErrorOf(error, origin, what);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  /** The bound session one sync's calls share (one TLS handshake and bind, not one per call); close() ends it. */
  let session: Promise<Client> | undefined;
  const sharedSession = () => (session ??= openLdapSession(endpoint, outbound));

  async function withSharedSession<T>(what: string, work: (client: Client) => Promise<T>): Promise<T> {
    try {
      return await work(await sharedSession());
    } catch (error) {
      throw ldapErrorOf(error, origin, what);
    }
  }

  /**
   * The session's paged searches, one after another where the server keeps one per connection
   * (OpenLDAP); AD serves the groups' search while link reads the pages of users.
   */
  let searches: Promise<void> = Promise.resolve();
  function searchTurn(): Promise<() => void> {
    let done!: () => void;
    const ended = new Promise<void>((resolve) => (done = resolve));
    const turn = searches.then(() => done);
    searches = searches.then(() => ended);
    return turn;
  }

  async function* searchPages(
    client: Client,
    base: string,
    filter: string,
    attributes: string[],
  ): AsyncGenerator<Entry[]> {
    const done = flavor.concurrentPagedSearches ? () => undefined : await searchTurn();
    try {
      for await (const page of client.searchPaginated(base, {
        scope: 'sub',
        filter,
        attributes,
        explicitBufferAttributes: flavor.binaryAttributes,
        paged: { pageSize },
      })) {
        if (page.searchEntries.length) yield page.searchEntries;
      }
    } finally {
      done();
    }
  }

  // What the mirror takes of a user, and nothing more: every attribute asked for is encoded by the
  // server and decoded here for each user of every full sync.
  const userAttributes = [
    flavor.idAttribute,
    flavor.userNameAttribute,
    'mail',
    'displayName',
    'cn',
    'givenName',
    'sn',
    'userAccountControl',
    'memberOf',
    flavor.departmentAttribute,
    'manager',
  ];

  const userIds = createUserIds(async (client, dn) => {
    try {
      const { searchEntries } = await client.search(dn, {
        scope: 'base',
        filter: '(objectClass=*)',
        attributes: [flavor.idAttribute],
        explicitBufferAttributes: flavor.binaryAttributes,
      });
      return searchEntries[0] ? flavor.idOf(searchEntries[0]) : null;
    } catch (error) {
      // A manager DN that names no entry (deleted since) is no manager; anything else is the sync's failure.
      if (ldapErrorOf(error, origin, 'read').kind !== 'ou_missing') throw error;
      return null;
    }
  });

  function userOf(entry: Entry, id: string | null): ScimUser | null {
    const userName = first(entry[flavor.userNameAttribute]);
    if (!id || !userName) return null;
    const mail = first(entry.mail);
    const given = first(entry.givenName);
    const family = first(entry.sn);
    return {
      id,
      userName,
      displayName: first(entry.displayName) ?? first(entry.cn),
      name: { givenName: given, familyName: family },
      emails: mail ? [{ value: mail, primary: true }] : [],
      active: flavor.activeOf(entry, entry.dn, settings.disabledOu),
      groups: all(entry.memberOf).map((dn) => ({ display: rdnValue(dn) })),
      [SCIM_ENTERPRISE_USER_SCHEMA]: { department: first(entry[flavor.departmentAttribute]) },
    };
  }

  /** The user with its manager's id (the manager named by DN), once that DN's id is known. */
  function withManager(user: ScimUser, managerDn: string | undefined): ScimUser {
    if (!managerDn) return user;
    const enterprise = user[SCIM_ENTERPRISE_USER_SCHEMA];
    return { ...user, [SCIM_ENTERPRISE_USER_SCHEMA]: { ...enterprise, manager: { value: userIds.idOf(managerDn) } } };
  }

  return {
    /** Binds and reads the base entry at once: throws an LdapError saying what is wrong. */
    async health(): Promise<void> {
      await withSession('a read of base_dn', async (client) => {
        const { searchEntries } = await client.search(settings.baseDn, {
          scope: 'base',
          filter: '(objectClass=*)',
          attributes: ['1.1'],
        });
        if (!searchEntries.length)
          throw new LdapError(
            `${origin} has no entry ${settings.baseDn} (config.base_dn), or the bind account may not read it`,
            'ou_missing',
            false,
          );
        await client
          .search(settings.usersOu, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] })
          .catch((error: unknown) => {
            throw ldapErrorOf(error, origin, `a read of users_ou ${settings.usersOu}`);
          });
      });
    },

    /**
     * Deltas are always possible (a change-time filter); the server's clock where the rootDSE
     * gives it, and AD's highest committed USN (`<usn>@<dsServiceName>`): the next delta asks for
     * uSNChanged above it.
     */
    async serviceProviderConfig(): Promise<{
      filterSupported: boolean;
      date: Date | null;
      cursor?: string | null;
      cursorName?: string;
    }> {
      const counter = flavor.changeCounter;
      return withSharedSession('a read of the rootDSE', async (client) => {
        const { searchEntries } = await client.search('', {
          scope: 'base',
          filter: '(objectClass=*)',
          attributes: ['currentTime', ...(counter ? [counter.highest, counter.server] : [])],
        });
        const root = searchEntries[0];
        const time = first(root?.currentTime);
        const match = time ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})/.exec(time) : null;
        const date = match
          ? new Date(Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!, +match[4]!, +match[5]!, +match[6]!))
          : null;
        if (!counter) return { filterSupported: true, date };
        const highest = first(root?.[counter.highest]);
        const server = first(root?.[counter.server]) ?? originOf(options.url);
        return {
          filterSupported: true,
          date,
          cursor: highest && /^\d+$/.test(highest) ? `${highest}@${server}` : null,
          cursorName: counter.name,
        };
      });
    },

    /**
     * Users under users_ou, a page at a time; with `since`, only those changed since. A user whose
     * manager the listing has not reached yet waits for the end of the listing, when the managers
     * it never reached (outside users_ou, or unchanged in a delta) are read, each once: a page
     * never holds more than the page size.
     */
    async *listUsers(since?: Date, after?: string): AsyncGenerator<ScimUser[]> {
      const filter = since ? `(&${flavor.userFilter}${flavor.changedSinceFilter(since, after)})` : flavor.userFilter;
      const ended = since ? undefined : userIds.fullListingStarted();
      const waiting: { user: ScimUser; managerDn: string }[] = [];
      try {
        const client = await sharedSession();
        for await (const page of searchPages(client, settings.usersOu, filter, userAttributes)) {
          const ready: ScimUser[] = [];
          // Every id of the page first: a manager may come after its reports in the same page.
          const ids = page.map((entry) => flavor.idOf(entry));
          for (const [i, entry] of page.entries()) {
            const id = ids[i];
            if (id) userIds.listed(entry.dn, id);
          }
          for (const [i, entry] of page.entries()) {
            const user = userOf(entry, ids[i] ?? null);
            if (!user) continue;
            const managerDn = first(entry.manager);
            if (managerDn && !userIds.knows(managerDn)) waiting.push({ user, managerDn });
            else ready.push(withManager(user, managerDn));
          }
          if (ready.length) yield ready;
        }
        ended?.(true);
        await userIds.readMissing(client, new Set(waiting.map(({ managerDn }) => managerDn)));
        for (let i = 0; i < waiting.length; i += pageSize)
          yield waiting.slice(i, i + pageSize).map(({ user, managerDn }) => withManager(user, managerDn));
      } catch (error) {
        throw ldapErrorOf(error, origin, `a search of users_ou ${settings.usersOu}`);
      } finally {
        ended?.(false);
      }
    },

    /**
     * Groups under groups_base (base_dn by default); members by their id. Member DNs under
     * users_ou are users of the full listing of this sync where there is one, else of one subtree
     * read of users_ou's ids (after the groups' search: one paged search at a time); any other
     * member (a nested group) is left out. A caller reads the groups alongside or after the users.
     */
    async *listGroups(since?: Date, after?: string): AsyncGenerator<ScimGroup[]> {
      const base = settings.groupsBase ?? settings.baseDn;
      const filter = since ? `(&${flavor.groupFilter}${flavor.changedSinceFilter(since, after)})` : flavor.groupFilter;
      const usersOu = settings.usersOu.toLowerCase();
      try {
        const client = await sharedSession();
        const found: { id: string; displayName: string; memberDns: string[] }[] = [];
        for await (const page of searchPages(client, base, filter, [flavor.idAttribute, 'cn', 'member'])) {
          for (const entry of page) {
            const id = flavor.idOf(entry);
            const displayName = first(entry.cn);
            if (id && displayName) found.push({ id, displayName, memberDns: all(entry.member) });
          }
        }
        const anyUser = found.some(({ memberDns }) => memberDns.some((dn) => dn.toLowerCase().endsWith(usersOu)));
        const ids = anyUser ? await userIds.usersOuIds(() => readUserIds(client)) : new Map<string, string>();
        for (let i = 0; i < found.length; i += pageSize) {
          yield found.slice(i, i + pageSize).map(({ id, displayName, memberDns }) => ({
            id,
            displayName,
            members: memberDns
              .map((dn) => ids.get(dn.toLowerCase()))
              .filter((value): value is string => typeof value === 'string')
              .map((value) => ({ value })),
          }));
        }
      } catch (error) {
        throw ldapErrorOf(error, origin, `a search of groups under ${base}`);
      }
    },

    /** Ends the session the sync's calls shared. */
    async close(): Promise<void> {
      const open = session;
      session = undefined;
      const client = await open?.catch(() => undefined);
      await client?.unbind().catch(() => undefined);
    },
  };

  /** users_ou's user DNs (lowercased) → ids: one subtree read of the ids alone. */
  async function readUserIds(client: Client): Promise<Map<string, string>> {
    const ids = new Map<string, string>();
    for await (const page of searchPages(client, settings.usersOu, flavor.userFilter, [flavor.idAttribute])) {
      for (const entry of page) {
        const id = flavor.idOf(entry);
        if (id) ids.set(entry.dn.toLowerCase(), id);
      }
    }
    return ids;
  }
}
