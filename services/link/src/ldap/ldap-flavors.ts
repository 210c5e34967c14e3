import type { Entry } from 'ldapts';
import type { LdapFlavor } from './ldap-settings';

/**
 * What differs between Active Directory and OpenLDAP, and nothing else: which attribute is the
 * stable id and the user name, how "disabled" is written, which objects are users and groups,
 * and how a change time is asked for in a delta.
 */
export interface Flavor {
  /** The attribute of the entry's stable id. */
  idAttribute: string;
  /** The entry's id in the string form the directory's own tools show. */
  idOf(entry: Entry): string | null;
  userNameAttribute: string;
  departmentAttribute: string;
  userFilter: string;
  groupFilter: string;
  /** Attributes read as buffers (binary ids). */
  binaryAttributes: string[];
  /** Whether one connection may carry several paged searches at a time (OpenLDAP keeps one: a second invalidates the first's cookie). */
  concurrentPagedSearches: boolean;
  /** Whether the account may sign in. */
  activeOf(entry: Entry, dn: string, disabledOu: string | null): boolean;
  /** The filter of entries changed at or after `since`, or after the change counter `after` (AD). */
  changedSinceFilter(since: Date, after?: string): string;
  /**
   * The rootDSE attribute of the server's change counter and the attribute naming the server
   * (AD: highestCommittedUSN of dsServiceName), for deltas by counter; absent: by time.
   */
  changeCounter?: { name: string; highest: string; server: string };
}

const first = (value: Entry[string] | undefined): string | Buffer | undefined =>
  Array.isArray(value) ? value[0] : value;

const HEX_OF_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** AD's objectGUID (16 bytes, little-endian first three groups) as AD's tools write it; once per entry read, so byte by byte. */
export function guidToString(guid: Buffer): string {
  const hex = (i: number) => HEX_OF_BYTE[guid[i]!]!;
  return (
    `${hex(3)}${hex(2)}${hex(1)}${hex(0)}-${hex(5)}${hex(4)}-${hex(7)}${hex(6)}-${hex(8)}${hex(9)}-` +
    `${hex(10)}${hex(11)}${hex(12)}${hex(13)}${hex(14)}${hex(15)}`
  );
}

/** The inverse, for a filter on objectGUID: each byte escaped (RFC 4515). */
export function guidFilterValue(id: string): string {
  const hex = id.replace(/-/g, '');
  const swap = (part: string) => part.match(/../g)!.reverse().join('');
  const bytes = swap(hex.slice(0, 8)) + swap(hex.slice(8, 12)) + swap(hex.slice(12, 16)) + hex.slice(16);
  return bytes.replace(/../g, (byte) => `\\${byte}`);
}

/** LDAP generalized time (RFC 4517 §3.3.13) of a date, whole seconds, UTC. */
function generalizedTime(date: Date, fraction: boolean): string {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${text}${fraction ? '.0' : ''}Z`;
}

const isUnder = (dn: string, ou: string | null) => ou !== null && dn.toLowerCase().endsWith(`,${ou.toLowerCase()}`);

/** userAccountControl's ACCOUNTDISABLE bit. */
export const UF_ACCOUNTDISABLE = 2;
export const UF_NORMAL_ACCOUNT = 512;

const activeDirectory: Flavor = {
  idAttribute: 'objectGUID',
  idOf(entry) {
    const guid = first(entry.objectGUID);
    return Buffer.isBuffer(guid) && guid.length === 16 ? guidToString(guid) : null;
  },
  userNameAttribute: 'sAMAccountName',
  departmentAttribute: 'department',
  // Users, not computers (which are users too in AD's schema).
  userFilter: '(&(objectCategory=person)(objectClass=user))',
  groupFilter: '(objectClass=group)',
  binaryAttributes: ['objectGUID'],
  concurrentPagedSearches: true,
  activeOf(entry) {
    const control = Number(first(entry.userAccountControl) ?? UF_NORMAL_ACCOUNT);
    return (control & UF_ACCOUNTDISABLE) === 0;
  },
  // uSNChanged is the DC's own change counter: exact, unlike whenChanged (whole seconds, and a
  // replicated change keeps the originating DC's time). whenChanged only for a delta without one.
  changedSinceFilter: (since, after) => {
    const usn = after ? /^\d+/.exec(after)?.[0] : undefined;
    return usn ? `(uSNChanged>=${BigInt(usn) + 1n})` : `(whenChanged>=${generalizedTime(since, true)})`;
  },
  changeCounter: { name: 'uSNChanged', highest: 'highestCommittedUSN', server: 'dsServiceName' },
};

const openLdap: Flavor = {
  idAttribute: 'entryUUID',
  idOf(entry) {
    const uuid = first(entry.entryUUID);
    return typeof uuid === 'string' && uuid ? uuid.toLowerCase() : null;
  },
  userNameAttribute: 'uid',
  departmentAttribute: 'departmentNumber',
  userFilter: '(objectClass=inetOrgPerson)',
  groupFilter: '(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames))',
  binaryAttributes: [],
  concurrentPagedSearches: false,
  // OpenLDAP has no disabled flag of its own: a leaver is moved to disabled_ou (and loses its password).
  activeOf: (_entry, dn, disabledOu) => !isUnder(dn, disabledOu),
  changedSinceFilter: (since) => `(modifyTimestamp>=${generalizedTime(since, false)})`,
};

export function flavorOf(flavor: LdapFlavor): Flavor {
  return flavor === 'openldap' ? openLdap : activeDirectory;
}
