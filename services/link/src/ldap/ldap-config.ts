import { BlockList } from 'node:net';
import type { LdapFlavor, LdapSettings } from './ldap-settings';

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
/** undefined: keep; null: clear; a string: set. */
const optional = (value: unknown, current: string | null): string | null =>
  value === undefined ? current : (str(value) ?? null);

/** The URL and settings a request's `config` gives, over the current ones for a PATCH. */
export function ldapSettingsFrom(
  config: Record<string, unknown>,
  current?: { url: string; settings: LdapSettings },
): { url: string; settings: LdapSettings } {
  const was = current?.settings;
  const url = (str(config.url) ?? current?.url ?? '').replace(/\/+$/, '');
  return {
    url,
    settings: {
      flavor: (str(config.flavor) as LdapFlavor | undefined) ?? was?.flavor ?? 'active_directory',
      startTls: typeof config.start_tls === 'boolean' ? config.start_tls : (was?.startTls ?? false),
      bindDn: str(config.bind_dn) ?? was?.bindDn ?? '',
      baseDn: str(config.base_dn) ?? was?.baseDn ?? '',
      usersOu: str(config.users_ou) ?? was?.usersOu ?? '',
      disabledOu: optional(config.disabled_ou, was?.disabledOu ?? null),
      groupsBase: optional(config.groups_base, was?.groupsBase ?? null),
      caCertificate: optional(config.ca_certificate, was?.caCertificate ?? null),
      bundleGroups: (config.bundle_groups as Record<string, string> | undefined) ?? was?.bundleGroups ?? {},
      upnSuffix: optional(config.upn_suffix, was?.upnSuffix ?? null),
      departmentOus: (config.department_ous as Record<string, string> | undefined) ?? was?.departmentOus ?? {},
    },
  };
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function isLoopback(address: string): boolean {
  return LOOPBACK.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
}

/**
 * Why binding over this URL would send the password in clear, or undefined. `ldaps://` and
 * StartTLS are encrypted; a plain `ldap://` is let through only to a server on loopback (every
 * address the name has) when OUTBOUND_ALLOW_LOOPBACK allows loopback at all: a developer's slapd.
 * AD refuses password writes without TLS anyway.
 */
export function transportProblem(
  url: string,
  startTls: boolean,
  addresses: string[] | undefined,
  allowsLoopback: boolean,
): string | undefined {
  if (url.startsWith('ldaps://') || startTls) return undefined;
  const local = allowsLoopback && addresses !== undefined && addresses.length > 0 && addresses.every(isLoopback);
  if (local) return undefined;
  return (
    `config.url ${url} is plain LDAP without start_tls: the bind password and every password link ` +
    'sets would cross the network in clear. Use ldaps:// or set start_tls: true'
  );
}
