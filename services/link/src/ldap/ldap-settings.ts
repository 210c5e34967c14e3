/**
 * An `ldap` connector's settings as stored (the record's `settings`, column ldap_config) and used: everything of its
 * `config` but the URL (connectors.base_url) and the bind password (sealed, bearer_token_encrypted).
 */
export type LdapFlavor = 'active_directory' | 'openldap';

export interface LdapSettings {
  flavor: LdapFlavor;
  startTls: boolean;
  bindDn: string;
  baseDn: string;
  usersOu: string;
  disabledOu: string | null;
  groupsBase: string | null;
  caCertificate: string | null;
  bundleGroups: Record<string, string>;
  upnSuffix: string | null;
  departmentOus: Record<string, string>;
}

/** The stored JSON (the record's `settings`) back as LDAP's settings; null when there are none. */
export function ldapSettingsOf(value: unknown): LdapSettings | null {
  if (!value || typeof value !== 'object') return null;
  const raw = value as Partial<LdapSettings>;
  return {
    flavor: raw.flavor === 'openldap' ? 'openldap' : 'active_directory',
    startTls: raw.startTls === true,
    bindDn: raw.bindDn ?? '',
    baseDn: raw.baseDn ?? '',
    usersOu: raw.usersOu ?? '',
    disabledOu: raw.disabledOu ?? null,
    groupsBase: raw.groupsBase ?? null,
    caCertificate: raw.caCertificate ?? null,
    bundleGroups: raw.bundleGroups ?? {},
    upnSuffix: raw.upnSuffix ?? null,
    departmentOus: raw.departmentOus ?? {},
  };
}
