import { randomInt } from 'node:crypto';
import { Attribute, Change, type Client, type Entry } from 'ldapts';
import type { Outbound } from '@msp/outbound';
import type { Directory, DirectoryDescription, DirectoryUserInput, DisableOutcome } from '../runs/directory';
import { LdapError, ldapErrorOf, openLdapSession, originOf } from './ldap-connection';
import { rdnValue } from './ldap-directory';
import { flavorOf, UF_ACCOUNTDISABLE, UF_NORMAL_ACCOUNT } from './ldap-flavors';
import type { LdapSettings } from './ldap-settings';

/**
 * The joiner–mover–leaver writes of an `ldap` connector: the run kinds' Directory over LDAP. Ids
 * are the flavour's (objectGUID string, entryUUID); the runs' userName (the person's e-mail) is
 * found as `mail` or `userPrincipalName`, or as the sAMAccountName / uid itself.
 */

/** RFC 4515 escaping of a filter value. */
export function escapeFilter(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** RFC 4514 escaping of an RDN value. */
export function escapeDn(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ');
}

/** A sAMAccountName stem from a name: lower-case ASCII letters, digits and dots, at most 20 characters. */
export function samStem(givenName: string, familyName: string): string {
  const ascii = (text: string) =>
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '');
  const stem = [ascii(givenName), ascii(familyName)].filter(Boolean).join('.') || 'user';
  return stem.slice(0, 20).replace(/\.$/, '');
}

const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
const LOWER = 'abcdefghijkmnpqrstuvwxyz';
const DIGITS = '23456789';
const SYMBOLS = '!#%+-=?@';

/** 20 random characters with every class AD's complexity rules count (upper, lower, digit, symbol). */
export function initialPassword(): string {
  const pick = (set: string) => set[randomInt(set.length)]!;
  const all = UPPER + LOWER + DIGITS + SYMBOLS;
  const chars = [pick(UPPER), pick(LOWER), pick(DIGITS), pick(SYMBOLS), ...Array.from({ length: 16 }, () => pick(all))];
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}

const first = (value: Entry[string] | undefined): string | undefined => {
  const one = Array.isArray(value) ? value[0] : value;
  return typeof one === 'string' ? one : undefined;
};
const all = (value: Entry[string] | undefined): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
    (item): item is string => typeof item === 'string',
  );

export interface LdapAccountsOptions {
  url: string;
  settings: LdapSettings;
  bindPassword: string;
  outbound: Outbound;
}

export type LdapAccounts = Omit<Directory, 'createUser'> & {
  createUser(
    user: DirectoryUserInput,
  ): Promise<{ id: string; userName: string; dn: string; initialPassword: string; managerDn: string | null }>;
  /** The DN a joiner would get, and whether the OU exists (dry runs). */
  dnOf(userId: string): Promise<string | null>;
  groupDnOf(bundle: string): Promise<string | null>;
  describe: DirectoryDescription;
};

/** Minimum length of link's initial passwords (initialPassword). */
const INITIAL_PASSWORD_LENGTH = 20;

export function createLdapAccounts(options: LdapAccountsOptions): LdapAccounts {
  const { settings, outbound } = options;
  const flavor = flavorOf(settings.flavor);
  const ad = settings.flavor === 'active_directory';
  const origin = originOf(options.url);
  const endpoint = {
    url: options.url,
    startTls: settings.startTls,
    caCertificate: settings.caCertificate,
    bindDn: settings.bindDn,
    bindPassword: options.bindPassword,
  };

  async function session<T>(what: string, work: (client: Client) => Promise<T>): Promise<T> {
    const client = await openLdapSession(endpoint, outbound);
    try {
      return await work(client);
    } catch (error) {
      throw ldapErrorOf(error, origin, what);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  const idFilter = (id: string) => `(entryUUID=${escapeFilter(id)})`;

  async function findOne(client: Client, base: string, filter: string, attributes: string[]): Promise<Entry | null> {
    const { searchEntries } = await client.search(base, {
      scope: 'sub',
      filter,
      attributes,
      explicitBufferAttributes: flavor.binaryAttributes,
      sizeLimit: 2,
    });
    return searchEntries[0] ?? null;
  }

  /**
   * The entry of an id. AD is asked by its `<GUID=…>` DN form (a filter on the binary objectGUID
   * would need its bytes through the client's filter encoding); OpenLDAP by an entryUUID filter.
   */
  async function byId(client: Client, id: string, attributes: string[]): Promise<Entry | null> {
    if (!ad) return findOne(client, settings.baseDn, idFilter(id), attributes);
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
    try {
      const { searchEntries } = await client.search(`<GUID=${id}>`, {
        scope: 'base',
        filter: '(objectClass=*)',
        attributes,
        explicitBufferAttributes: flavor.binaryAttributes,
      });
      return searchEntries[0] ?? null;
    } catch (error) {
      if (ldapErrorOf(error, origin, 'read').kind === 'ou_missing') return null;
      throw error;
    }
  }

  async function entryOf(client: Client, id: string, attributes: string[] = ['1.1']): Promise<Entry> {
    const entry = await byId(client, id, attributes);
    if (!entry)
      throw new LdapError(
        `${origin} has no entry with ${flavor.idAttribute} ${id} under ${settings.baseDn}`,
        'ou_missing',
        false,
      );
    return entry;
  }

  async function userByName(client: Client, userName: string): Promise<Entry | null> {
    const value = escapeFilter(userName);
    const filter = ad
      ? `(&${flavor.userFilter}(|(mail=${value})(userPrincipalName=${value})(sAMAccountName=${value})))`
      : `(&${flavor.userFilter}(|(mail=${value})(uid=${value})))`;
    return findOne(client, settings.baseDn, filter, [
      flavor.idAttribute,
      'userAccountControl',
      flavor.userNameAttribute,
    ]);
  }

  async function groupEntry(client: Client, bundle: string): Promise<Entry | null> {
    const target = settings.bundleGroups[bundle] ?? bundle;
    if (/^[A-Za-z]+=/.test(target) && target.includes(',')) {
      try {
        const { searchEntries } = await client.search(target, {
          scope: 'base',
          filter: flavor.groupFilter,
          attributes: [flavor.idAttribute, 'cn'],
          explicitBufferAttributes: flavor.binaryAttributes,
        });
        return searchEntries[0] ?? null;
      } catch (error) {
        if (ldapErrorOf(error, origin, 'read').kind === 'ou_missing') return null;
        throw error;
      }
    }
    return findOne(
      client,
      settings.groupsBase ?? settings.baseDn,
      `(&${flavor.groupFilter}(cn=${escapeFilter(target)}))`,
      [flavor.idAttribute, 'cn'],
    );
  }

  async function uniqueName(client: Client, stem: string): Promise<string> {
    for (let n = 1; n < 1000; n++) {
      const suffix = n === 1 ? '' : String(n);
      const candidate = `${stem.slice(0, 20 - suffix.length).replace(/\.$/, '')}${suffix}`;
      const taken = await findOne(client, settings.baseDn, `(${flavor.userNameAttribute}=${escapeFilter(candidate)})`, [
        '1.1',
      ]);
      if (!taken) return candidate;
    }
    throw new LdapError(`no free ${flavor.userNameAttribute} for ${stem}`, 'account_exists', false);
  }

  async function uniqueCn(client: Client, parent: string, cn: string): Promise<string> {
    for (let n = 1; n < 1000; n++) {
      const candidate = n === 1 ? cn : `${cn} ${n}`;
      const rdn = ad ? `CN=${escapeDn(candidate)}` : `cn=${escapeDn(candidate)}`;
      const { searchEntries } = await client.search(parent, { scope: 'one', filter: `(${rdn})`, attributes: ['1.1'] });
      if (!searchEntries.length) return candidate;
    }
    return cn;
  }

  const replace = (type: string, values: string[] | Buffer[]) =>
    new Change({ operation: 'replace', modification: new Attribute({ type, values: values as string[] }) });
  const unicodePwd = (password: string) => Buffer.from(`"${password}"`, 'utf16le');

  const accounts: LdapAccounts = {
    async createUser(user) {
      return session(`the creation of ${user.email}`, async (client) => {
        const displayName = `${user.givenName} ${user.familyName}`.trim();
        // Another account with this e-mail (mail, UPN or logon name) is someone's: never a second one.
        const existing = await userByName(client, user.email);
        if (existing)
          throw new LdapError(
            `${origin} already has an account for ${user.email} (${existing.dn}): nothing was created`,
            'account_exists',
            false,
          );
        const userName = ad
          ? await uniqueName(client, samStem(user.givenName, user.familyName))
          : await uniqueName(
              client,
              user.email
                .split('@')[0]!
                .toLowerCase()
                .replace(/[^a-z0-9._-]/g, '') || 'user',
            );
        const password = initialPassword();
        const common: Record<string, string | string[] | Buffer[]> = {
          givenName: user.givenName,
          sn: user.familyName || user.givenName,
          displayName,
          mail: user.email,
        };
        if (user.title) common.title = user.title;
        // The manager by e-mail; a manager the directory does not have is left unset, not a failed joiner.
        const managerDn = user.managerUserName ? ((await userByName(client, user.managerUserName))?.dn ?? null) : null;
        if (managerDn) common.manager = managerDn;
        if (ad) {
          const cn = await uniqueCn(client, settings.usersOu, displayName);
          const dn = `CN=${escapeDn(cn)},${settings.usersOu}`;
          await client.add(dn, {
            objectClass: ['top', 'person', 'organizationalPerson', 'user'],
            cn,
            sAMAccountName: userName,
            userPrincipalName: user.email || `${userName}@${settings.upnSuffix ?? ''}`,
            ...common,
            ...(user.department ? { department: user.department } : {}),
            unicodePwd: [unicodePwd(password)],
            userAccountControl: String(
              user.active === false ? UF_NORMAL_ACCOUNT | UF_ACCOUNTDISABLE : UF_NORMAL_ACCOUNT,
            ),
            pwdLastSet: '0',
          } as unknown as Record<string, string[]>);
          const { searchEntries } = await client.search(dn, {
            scope: 'base',
            attributes: ['objectGUID'],
            explicitBufferAttributes: ['objectGUID'],
          });
          return { id: flavor.idOf(searchEntries[0]!)!, userName, dn, initialPassword: password, managerDn };
        }
        const dn = `uid=${escapeDn(userName)},${user.active === false && settings.disabledOu ? settings.disabledOu : settings.usersOu}`;
        await client.add(dn, {
          objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson'],
          uid: userName,
          cn: displayName,
          ...common,
          ...(user.department ? { departmentNumber: user.department } : {}),
          userPassword: password,
        } as Record<string, string | string[]>);
        const { searchEntries } = await client.search(dn, { scope: 'base', attributes: ['entryUUID'] });
        return { id: flavor.idOf(searchEntries[0]!)!, userName, dn, initialPassword: password, managerDn };
      });
    },

    async findUserByUserName(userName) {
      return session(`a search for ${userName}`, async (client) => {
        const entry = await userByName(client, userName);
        const id = entry ? flavor.idOf(entry) : null;
        return entry && id ? { id, active: flavor.activeOf(entry, entry.dn, settings.disabledOu) } : null;
      });
    },

    async findGroupByDisplayName(bundle) {
      return session(`a search for the group of ${bundle}`, async (client) => {
        const entry = await groupEntry(client, bundle);
        const id = entry ? flavor.idOf(entry) : null;
        return id ? { id } : null;
      });
    },

    async addGroupMember(groupId, userId) {
      await session('adding a group member', async (client) => {
        const [group, user] = [await entryOf(client, groupId, ['member']), await entryOf(client, userId)];
        if (all(group.member).some((dn) => dn.toLowerCase() === user.dn.toLowerCase())) return;
        await client.modify(
          group.dn,
          new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [user.dn] }) }),
        );
      });
    },

    async removeGroupMember(groupId, userId) {
      await session('removing a group member', async (client) => {
        const [group, user] = [await entryOf(client, groupId, ['member']), await entryOf(client, userId)];
        if (!all(group.member).some((dn) => dn.toLowerCase() === user.dn.toLowerCase())) return;
        await client.modify(
          group.dn,
          new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [user.dn] }) }),
        );
      });
    },

    async activateUser(userId) {
      await session('enabling an account', async (client) => {
        const user = await entryOf(client, userId, ['userAccountControl']);
        if (ad) {
          const control = Number(first(user.userAccountControl) ?? UF_NORMAL_ACCOUNT);
          await client.modify(user.dn, replace('userAccountControl', [String(control & ~UF_ACCOUNTDISABLE)]));
        } else if (settings.disabledOu && user.dn.toLowerCase().endsWith(`,${settings.disabledOu.toLowerCase()}`)) {
          await client.modifyDN(user.dn, `${user.dn.split(/(?<!\\),/)[0]},${settings.usersOu}`);
        }
      });
    },

    async deactivateUser(userId, opts = {}): Promise<DisableOutcome> {
      return session('disabling an account', async (client) => {
        const user = await entryOf(client, userId, ['userAccountControl', 'memberOf']);
        if (ad) {
          const control = Number(first(user.userAccountControl) ?? UF_NORMAL_ACCOUNT);
          await client.modify(user.dn, replace('userAccountControl', [String(control | UF_ACCOUNTDISABLE)]));
        }
        // Every group but the primary one (which memberOf does not list and AD will not remove).
        const removedGroups: string[] = [];
        for (const groupDn of all(user.memberOf)) {
          await client.modify(
            groupDn,
            new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [user.dn] }) }),
          );
          removedGroups.push(groupDn);
        }
        if (opts.note) await client.modify(user.dn, replace('description', [opts.note]));
        let movedTo: string | undefined;
        if (settings.disabledOu && !user.dn.toLowerCase().endsWith(`,${settings.disabledOu.toLowerCase()}`)) {
          const rdn = user.dn.split(/(?<!\\),/)[0]!;
          movedTo = `${rdn},${settings.disabledOu}`;
          await client.modifyDN(user.dn, movedTo);
        }
        if (!ad && !settings.disabledOu)
          await client
            .modify(
              user.dn,
              new Change({ operation: 'delete', modification: new Attribute({ type: 'userPassword', values: [] }) }),
            )
            .catch(() => undefined);
        return { removedGroups: removedGroups.map(rdnValue), movedTo };
      });
    },

    async deleteUser(userId) {
      return session('deleting an account', async (client) => {
        const entry = await byId(client, userId, ['1.1']);
        if (!entry) return false;
        await client.del(entry.dn);
        return true;
      });
    },

    async updateUserProfile(userId, profile) {
      await session('updating an account', async (client) => {
        const user = await entryOf(client, userId);
        const changes: Change[] = [];
        if (profile.title !== undefined) changes.push(replace('title', [profile.title]));
        if (profile.department !== undefined) changes.push(replace(flavor.departmentAttribute, [profile.department]));
        if (profile.managerId !== undefined)
          changes.push(replace('manager', [(await entryOf(client, profile.managerId)).dn]));
        if (changes.length) await client.modify(user.dn, changes);
        const ou = profile.department !== undefined ? settings.departmentOus[profile.department] : undefined;
        if (ou && !user.dn.toLowerCase().endsWith(`,${ou.toLowerCase()}`))
          await client.modifyDN(user.dn, `${user.dn.split(/(?<!\\),/)[0]},${ou}`);
      });
    },

    async dnOf(userId) {
      return session('a read', async (client) => (await byId(client, userId, ['1.1']))?.dn ?? null);
    },

    async groupDnOf(bundle) {
      return session('a read', async (client) => (await groupEntry(client, bundle))?.dn ?? null);
    },

    describe: {
      where:
        settings.baseDn
          .split(/(?<!\\),/)
          .filter((rdn) => /^dc=/i.test(rdn.trim()))
          .map((rdn) => rdnValue(rdn.trim()))
          .join('.') || settings.baseDn,
      async newUserName(user) {
        return session(`a read of users_ou ${settings.usersOu}`, async (client) => {
          // users_ou must exist (a missing parent is ou_missing, as the add would be).
          await client.search(settings.usersOu, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] });
          if (ad)
            return `CN=${escapeDn(await uniqueCn(client, settings.usersOu, `${user.givenName} ${user.familyName}`.trim()))},${settings.usersOu}`;
          const uid = await uniqueName(
            client,
            user.email
              .split('@')[0]!
              .toLowerCase()
              .replace(/[^a-z0-9._-]/g, '') || 'user',
          );
          return `uid=${escapeDn(uid)},${user.active === false && settings.disabledOu ? settings.disabledOu : settings.usersOu}`;
        });
      },
      userName: (userId) => accounts.dnOf(userId),
      groupName: (bundle) => accounts.groupDnOf(bundle),
      async passwordProblem() {
        if (!ad) return null;
        return session('a read of the password policy', async (client) => {
          const { searchEntries } = await client.search(settings.baseDn, {
            scope: 'base',
            filter: '(objectClass=*)',
            attributes: ['minPwdLength'],
          });
          const min = Number(first(searchEntries[0]?.minPwdLength) ?? 0);
          return min > INITIAL_PASSWORD_LENGTH
            ? `The domain's password policy asks for at least ${min} characters (minPwdLength); link's initial ` +
                `passwords have ${INITIAL_PASSWORD_LENGTH}: the domain controller would refuse the account ` +
                '(0000052D).'
            : null;
        });
      },
      departmentOu: (department) => settings.departmentOus[department] ?? null,
    },
  };
  return accounts;
}
