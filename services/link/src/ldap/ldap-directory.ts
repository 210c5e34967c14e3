import type { Client, Entry } from 'ldapts';
import type { Outbound } from '@msp/outbound';
import { SCIM_ENTERPRISE_USER_SCHEMA, type ScimGroup, type ScimUser } from '../scim/scim-client';
import { LdapError, ldapErrorOf, openLdapSession, originOf } from './ldap-connection';
import { flavorOf } from './ldap-flavors';
import type { LdapSettings } from './ldap-settings';

/**
 * An `ldap` connector's directory (Active Directory or OpenLDAP): its health, and its users and
 * groups read page by page (the paged results control, RFC 2696) in the shape the mirror takes.
 * Each call opens its own bound session and closes it.
 */

export interface LdapDirectoryOptions {
  url: string;
  settings: LdapSettings;
  bindPassword: string;
  outbound: Outbound;
  /** Entries per page (AD's MaxPageSize is 1,000, the default). */
  pageSize?: number;
}

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
  const pageSize = options.pageSize ?? 1000;
  /** users_ou's DNs → ids, read once per directory object (one sync) when group members need them. */
  let usersById: Map<string, string> | undefined;
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

  async function* searchPages(
    client: Client,
    base: string,
    filter: string,
    attributes: string[],
  ): AsyncGenerator<Entry[]> {
    for await (const page of client.searchPaginated(base, {
      scope: 'sub',
      filter,
      attributes,
      explicitBufferAttributes: flavor.binaryAttributes,
      paged: { pageSize },
    })) {
      if (page.searchEntries.length) yield page.searchEntries;
    }
  }

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
    'title',
    'manager',
  ];

  /** Every user DN seen by this directory object (one sync) → its id; null for a DN that is not an entry. */
  const idOfUserDn = new Map<string, string | null>();

  /**
   * The ids of the managers the page's entries name: from the users already read (this page and
   * the earlier ones), else by a base read of the DN (a manager later in the listing, outside
   * users_ou, or in a delta that did not list it), each DN read once.
   */
  async function resolveManagers(client: Client, page: Entry[]): Promise<void> {
    for (const entry of page) {
      const id = flavor.idOf(entry);
      if (id) idOfUserDn.set(entry.dn.toLowerCase(), id);
    }
    for (const entry of page) {
      const dn = first(entry.manager);
      if (!dn || idOfUserDn.has(dn.toLowerCase())) continue;
      let id: string | null = null;
      try {
        const { searchEntries } = await client.search(dn, {
          scope: 'base',
          filter: '(objectClass=*)',
          attributes: [flavor.idAttribute],
          explicitBufferAttributes: flavor.binaryAttributes,
        });
        id = searchEntries[0] ? flavor.idOf(searchEntries[0]) : null;
      } catch (error) {
        // A manager DN that names no entry (deleted since) is no manager; anything else is the sync's failure.
        if (ldapErrorOf(error, origin, 'read').kind !== 'ou_missing') throw error;
      }
      idOfUserDn.set(dn.toLowerCase(), id);
    }
  }

  function userOf(entry: Entry): ScimUser | null {
    const id = flavor.idOf(entry);
    const userName = first(entry[flavor.userNameAttribute]);
    if (!id || !userName) return null;
    const mail = first(entry.mail);
    const given = first(entry.givenName);
    const family = first(entry.sn);
    const managerDn = first(entry.manager);
    return {
      id,
      userName,
      displayName: first(entry.displayName) ?? first(entry.cn),
      name: { givenName: given, familyName: family },
      emails: mail ? [{ value: mail, primary: true }] : [],
      active: flavor.activeOf(entry, entry.dn, settings.disabledOu),
      groups: all(entry.memberOf).map((dn) => ({ display: rdnValue(dn) })),
      [SCIM_ENTERPRISE_USER_SCHEMA]: {
        department: first(entry[flavor.departmentAttribute]),
        manager: managerDn ? { value: idOfUserDn.get(managerDn.toLowerCase()) ?? undefined } : undefined,
      },
    };
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
      return withSession('a read of the rootDSE', async (client) => {
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

    /** Users under users_ou, a page at a time; with `since`, only those changed since. */
    async *listUsers(since?: Date, after?: string): AsyncGenerator<ScimUser[]> {
      const filter = since ? `(&${flavor.userFilter}${flavor.changedSinceFilter(since, after)})` : flavor.userFilter;
      const client = await openLdapSession(endpoint, outbound);
      try {
        for await (const page of searchPages(client, settings.usersOu, filter, userAttributes)) {
          await resolveManagers(client, page);
          yield page.map(userOf).filter((user): user is ScimUser => user !== null);
        }
      } catch (error) {
        throw ldapErrorOf(error, origin, `a search of users_ou ${settings.usersOu}`);
      } finally {
        await client.unbind().catch(() => undefined);
      }
    },

    /**
     * Groups under groups_base (base_dn by default); members by their id. Member DNs are turned
     * into ids by reading the members (a page of DNs at a time, one OR filter per batch).
     */
    async *listGroups(since?: Date, after?: string): AsyncGenerator<ScimGroup[]> {
      const base = settings.groupsBase ?? settings.baseDn;
      const filter = since ? `(&${flavor.groupFilter}${flavor.changedSinceFilter(since, after)})` : flavor.groupFilter;
      const client = await openLdapSession(endpoint, outbound);
      const idOfDn = new Map<string, string | null>();
      try {
        for await (const page of searchPages(client, base, filter, [flavor.idAttribute, 'cn', 'member'])) {
          const unknown = new Set<string>();
          for (const entry of page)
            for (const dn of all(entry.member)) if (!idOfDn.has(dn.toLowerCase())) unknown.add(dn);
          await resolveIds(client, [...unknown], idOfDn);
          const groups: ScimGroup[] = [];
          for (const entry of page) {
            const id = flavor.idOf(entry);
            const name = first(entry.cn);
            if (!id || !name) continue;
            const members = all(entry.member)
              .map((dn) => idOfDn.get(dn.toLowerCase()))
              .filter((value): value is string => typeof value === 'string')
              .map((value) => ({ value }));
            groups.push({ id, displayName: name, members });
          }
          yield groups;
        }
      } catch (error) {
        throw ldapErrorOf(error, origin, `a search of groups under ${base}`);
      } finally {
        await client.unbind().catch(() => undefined);
      }
    },
  };

  /** The ids of these DNs (users under users_ou; anything else, e.g. nested groups, stays null). */
  async function resolveIds(client: Client, dns: string[], into: Map<string, string | null>) {
    for (const dn of dns) into.set(dn.toLowerCase(), null);
    const underUsers = dns.filter((dn) => dn.toLowerCase().endsWith(settings.usersOu.toLowerCase()));
    if (!underUsers.length) return;
    // One subtree read of the users' ids and DNs is cheaper than a base read per member.
    if (!usersById) {
      usersById = new Map();
      for await (const page of searchPages(client, settings.usersOu, flavor.userFilter, [flavor.idAttribute])) {
        for (const entry of page) {
          const id = flavor.idOf(entry);
          if (id) usersById.set(entry.dn.toLowerCase(), id);
        }
      }
    }
    for (const dn of underUsers) into.set(dn.toLowerCase(), usersById.get(dn.toLowerCase()) ?? null);
  }
}
