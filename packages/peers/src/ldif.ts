import { Attribute } from 'ldapts';

/** One directory entry, as written to a server (over LDAP or as LDIF for an offline load). */
export type LdapValue = string | Buffer;
export interface LdapEntry {
  dn: string;
  attributes: Record<string, LdapValue | readonly LdapValue[]>;
}

/** Serialises entries as LDIF change records of type add (RFC 2849), base64 where needed. */
export function toLdif(entries: readonly LdapEntry[]): string {
  const blocks: string[] = [];
  for (const entry of entries) {
    const lines = [line('dn', entry.dn)];
    for (const [name, value] of Object.entries(entry.attributes)) {
      for (const v of Array.isArray(value) ? value : [value as LdapValue]) lines.push(line(name, v));
    }
    blocks.push(lines.join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

// RFC 2849 SAFE-STRING: printable ASCII, not starting with space, colon or '<' (nor, for
// ldbadd's sake, ending with a space); anything else goes base64.
const SAFE = /^(?![ :<])[ -~]*$/;
function line(name: string, value: LdapValue): string {
  if (typeof value === 'string' && SAFE.test(value) && !value.endsWith(' ')) return `${name}: ${value}`;
  return `${name}:: ${Buffer.from(value).toString('base64')}`;
}

/** The entry's attributes in the form ldapts's `add` takes (binary values kept as buffers). */
export function toLdaptsAttributes(entry: LdapEntry): Attribute[] {
  return Object.entries(entry.attributes).map(([type, value]) => {
    const values = Array.isArray(value) ? value : [value as LdapValue];
    const binary = values.some((v) => Buffer.isBuffer(v));
    return new Attribute({
      type,
      values: binary ? values.map((v) => Buffer.from(v)) : (values as string[]),
    });
  });
}

/** AD's unicodePwd value: the password in double quotes, UTF-16LE. */
export function unicodePwd(password: string): Buffer {
  return Buffer.from(`"${password}"`, 'utf16le');
}

/**
 * objectGUID (16 bytes as read over LDAP) in the string form Active Directory's own tools show:
 * the first three groups are little-endian, so it is not the bytes' hex in order.
 */
export function objectGuidToString(guid: Buffer): string {
  if (guid.length !== 16) throw new Error(`objectGUID must be 16 bytes, got ${guid.length}`);
  const h = guid.toString('hex');
  const swap = (s: string) => s.match(/../g)!.reverse().join('');
  return `${swap(h.slice(0, 8))}-${swap(h.slice(8, 12))}-${swap(h.slice(12, 16))}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The RDN value escaped for use in a DN (RFC 4514). */
export function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ');
}

// ---------------------------------------------------------------- Active Directory

/** userAccountControl bits used here: NORMAL_ACCOUNT (512) and ACCOUNTDISABLE (2). */
export const UF_NORMAL_ACCOUNT = 0x200;
export const UF_ACCOUNTDISABLE = 0x2;

export interface AdUserSpec {
  /** The entry's CN (AD: usually the display name). */
  cn: string;
  /** The OU or container the user is created in. */
  parentDn: string;
  sAMAccountName: string;
  userPrincipalName?: string;
  givenName?: string;
  sn?: string;
  displayName?: string;
  mail?: string;
  department?: string;
  title?: string;
  /** DN of the manager's entry. */
  manager?: string;
  description?: string;
  /**
   * Initial password (sent as unicodePwd; over LDAP only on a TLS connection). Costly on Samba
   * (Kerberos keys are derived for each): leave it out for bulk users that never bind.
   */
  password?: string;
  /** userAccountControl 512 when true (default), 514 (disabled) when false. */
  enabled?: boolean;
  /** Any further attributes, written as given. */
  attributes?: Record<string, LdapValue | readonly LdapValue[]>;
}

export function adUser(spec: AdUserSpec): LdapEntry {
  const attributes: LdapEntry['attributes'] = {
    objectClass: ['top', 'person', 'organizationalPerson', 'user'],
    cn: spec.cn,
    sAMAccountName: spec.sAMAccountName,
    userAccountControl: String(UF_NORMAL_ACCOUNT | (spec.enabled === false ? UF_ACCOUNTDISABLE : 0)),
  };
  const optional = {
    userPrincipalName: spec.userPrincipalName,
    givenName: spec.givenName,
    sn: spec.sn,
    displayName: spec.displayName,
    mail: spec.mail,
    department: spec.department,
    title: spec.title,
    manager: spec.manager,
    description: spec.description,
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) attributes[k] = v;
  if (spec.password !== undefined) attributes.unicodePwd = unicodePwd(spec.password);
  Object.assign(attributes, spec.attributes);
  return { dn: `CN=${escapeDnValue(spec.cn)},${spec.parentDn}`, attributes };
}

export interface AdGroupSpec {
  cn: string;
  parentDn: string;
  sAMAccountName?: string;
  /** Member DNs. */
  members?: readonly string[];
  description?: string;
  attributes?: Record<string, LdapValue | readonly LdapValue[]>;
}

/** A global security group (AD's default group type). */
export function adGroup(spec: AdGroupSpec): LdapEntry {
  const attributes: LdapEntry['attributes'] = {
    objectClass: ['top', 'group'],
    cn: spec.cn,
    sAMAccountName: spec.sAMAccountName ?? spec.cn.replace(/[^A-Za-z0-9._-]/g, '').slice(0, 20),
  };
  if (spec.members?.length) attributes.member = spec.members;
  if (spec.description !== undefined) attributes.description = spec.description;
  Object.assign(attributes, spec.attributes);
  return { dn: `CN=${escapeDnValue(spec.cn)},${spec.parentDn}`, attributes };
}

/** An organizational unit; `dn` is its full DN (`OU=Staff,DC=corp,DC=example`). */
export function organizationalUnit(dn: string, description?: string): LdapEntry {
  const attributes: LdapEntry['attributes'] = { objectClass: ['top', 'organizationalUnit'] };
  if (description !== undefined) attributes.description = description;
  return { dn, attributes };
}

export interface DirectoryShape {
  /** The directory's base DN. */
  baseDn: string;
  /** The mail and UPN domain (`corp.example`). */
  mailDomain: string;
  users: number;
  groups: number;
  /** RDN of the users' OU under the base (default `OU=Staff`), created too. */
  usersOu?: string;
  /** RDN of the groups' OU under the base (default `OU=Groups`), created too. */
  groupsOu?: string;
  /** Members of each group (default 15), spread over all users. */
  membersPerGroup?: number;
  /** Number of departments the users are spread over (default 20). */
  departments?: number;
}

export interface GeneratedDirectory {
  entries: LdapEntry[];
  usersOu: string;
  groupsOu: string;
  /** The users' DNs, in creation order. */
  userDns: string[];
  groupDns: string[];
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * A directory of the given size with plausible data, deterministic (the same shape gives the same
 * entries, so an offline-loaded template can be cached by it): users `user0001`… with given name,
 * surname, display name, mail, UPN, department, title and a manager (every 50th user leads the
 * next 49), and groups `Group 001`… with members spread over all users.
 */
export function adDirectory(shape: DirectoryShape): GeneratedDirectory {
  const usersOu = `${shape.usersOu ?? 'OU=Staff'},${shape.baseDn}`;
  const groupsOu = `${shape.groupsOu ?? 'OU=Groups'},${shape.baseDn}`;
  const entries: LdapEntry[] = [organizationalUnit(usersOu), organizationalUnit(groupsOu)];
  const width = Math.max(4, String(shape.users).length);
  const userDns: string[] = [];
  const departments = shape.departments ?? 20;
  for (let i = 1; i <= shape.users; i++) {
    const n = pad(i, width);
    const leader = i - ((i - 1) % 50);
    const entry = adUser({
      cn: `User ${n}`,
      parentDn: usersOu,
      sAMAccountName: `user${n}`,
      userPrincipalName: `user${n}@${shape.mailDomain}`,
      givenName: 'User',
      sn: n,
      displayName: `User ${n}`,
      mail: `user${n}@${shape.mailDomain}`,
      department: `Department ${pad(((i - 1) % departments) + 1, 2)}`,
      title: leader === i ? 'Team lead' : 'Engineer',
      manager: leader === i ? undefined : `CN=User ${pad(leader, width)},${usersOu}`,
    });
    entries.push(entry);
    userDns.push(entry.dn);
  }
  const groupDns = groupsFor(shape, userDns, entries, (cn, members) => adGroup({ cn, parentDn: groupsOu, members }));
  return { entries, usersOu, groupsOu, userDns, groupDns };
}

function groupsFor(
  shape: DirectoryShape,
  userDns: readonly string[],
  entries: LdapEntry[],
  make: (cn: string, members: string[]) => LdapEntry,
): string[] {
  const perGroup = Math.min(shape.membersPerGroup ?? 15, userDns.length);
  const groupDns: string[] = [];
  let next = 0;
  for (let g = 1; g <= shape.groups; g++) {
    const members: string[] = [];
    for (let k = 0; k < perGroup; k++) members.push(userDns[next++ % userDns.length]!);
    const entry = make(`Group ${pad(g, 3)}`, members);
    entries.push(entry);
    groupDns.push(entry.dn);
  }
  return groupDns;
}

// ---------------------------------------------------------------- OpenLDAP

export interface InetOrgPersonSpec {
  uid: string;
  parentDn: string;
  cn: string;
  sn: string;
  givenName?: string;
  displayName?: string;
  mail?: string;
  title?: string;
  departmentNumber?: string;
  manager?: string;
  /** Stored as userPassword (slapd hashes nothing by itself: it is kept as given). */
  password?: string;
  attributes?: Record<string, LdapValue | readonly LdapValue[]>;
}

/** A user as OpenLDAP directories usually hold one, named by `uid`. */
export function inetOrgPerson(spec: InetOrgPersonSpec): LdapEntry {
  const attributes: LdapEntry['attributes'] = {
    objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson'],
    uid: spec.uid,
    cn: spec.cn,
    sn: spec.sn,
  };
  const optional = {
    givenName: spec.givenName,
    displayName: spec.displayName,
    mail: spec.mail,
    title: spec.title,
    departmentNumber: spec.departmentNumber,
    manager: spec.manager,
    userPassword: spec.password,
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) attributes[k] = v;
  Object.assign(attributes, spec.attributes);
  return { dn: `uid=${escapeDnValue(spec.uid)},${spec.parentDn}`, attributes };
}

/** A groupOfNames (which must have at least one member; the group's own DN stands in when empty). */
export function groupOfNames(spec: {
  cn: string;
  parentDn: string;
  members?: readonly string[];
  description?: string;
}): LdapEntry {
  const dn = `cn=${escapeDnValue(spec.cn)},${spec.parentDn}`;
  const attributes: LdapEntry['attributes'] = {
    objectClass: ['top', 'groupOfNames'],
    cn: spec.cn,
    member: spec.members?.length ? spec.members : [dn],
  };
  if (spec.description !== undefined) attributes.description = spec.description;
  return { dn, attributes };
}

/** `adDirectory`'s counterpart for OpenLDAP: `ou=people` and `ou=groups` with inetOrgPerson and groupOfNames. */
export function openLdapDirectory(shape: DirectoryShape): GeneratedDirectory {
  const usersOu = `${shape.usersOu ?? 'ou=people'},${shape.baseDn}`;
  const groupsOu = `${shape.groupsOu ?? 'ou=groups'},${shape.baseDn}`;
  const entries: LdapEntry[] = [
    { dn: usersOu, attributes: { objectClass: ['top', 'organizationalUnit'], ou: rdnValue(usersOu) } },
    { dn: groupsOu, attributes: { objectClass: ['top', 'organizationalUnit'], ou: rdnValue(groupsOu) } },
  ];
  const width = Math.max(4, String(shape.users).length);
  const departments = shape.departments ?? 20;
  const userDns: string[] = [];
  for (let i = 1; i <= shape.users; i++) {
    const n = pad(i, width);
    const leader = i - ((i - 1) % 50);
    const entry = inetOrgPerson({
      uid: `user${n}`,
      parentDn: usersOu,
      cn: `User ${n}`,
      sn: n,
      givenName: 'User',
      displayName: `User ${n}`,
      mail: `user${n}@${shape.mailDomain}`,
      departmentNumber: `Department ${pad(((i - 1) % departments) + 1, 2)}`,
      title: leader === i ? 'Team lead' : 'Engineer',
      manager: leader === i ? undefined : `uid=user${pad(leader, width)},${usersOu}`,
    });
    entries.push(entry);
    userDns.push(entry.dn);
  }
  const groupDns = groupsFor(shape, userDns, entries, (cn, members) =>
    groupOfNames({ cn, parentDn: groupsOu, members }),
  );
  return { entries, usersOu, groupsOu, userDns, groupDns };
}

function rdnValue(dn: string): string {
  const first = dn.split(',')[0] ?? '';
  return first.slice(first.indexOf('=') + 1);
}
