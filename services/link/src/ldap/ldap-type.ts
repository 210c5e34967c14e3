import { unprocessable } from '@msp/http';
import { OutboundBlockedError, type Outbound } from '@msp/outbound';
import type { ConnectorSettings, ConnectorTypeDefinition, Connection } from '../connectors/connector-type';
import { createLdapAccounts } from './ldap-accounts';
import { ldapSettingsFrom, transportProblem } from './ldap-config';
import { LdapError } from './ldap-connection';
import { createLdapDirectory } from './ldap-directory';
import { LdapConfigInput, LdapConfigOutput, LdapConfigPatch } from './ldap-schemas';
import { ldapSettingsOf, type LdapSettings } from './ldap-settings';

/** The connector's stored settings read as LDAP's; an ldap connector always has them. */
function settingsOf(settings: ConnectorSettings): LdapSettings {
  const ldap = ldapSettingsOf(settings.settings);
  if (!ldap) throw new Error('an ldap connector without its settings');
  return ldap;
}

/** The LDAP server's host: refused as a base_url would be, and a cleartext bind refused unless on loopback. */
async function assertLdapReachable(url: string, startTls: boolean, outbound: Outbound) {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[] | undefined;
  try {
    addresses = await outbound.addressesFor(host);
  } catch (error) {
    if (!(error instanceof OutboundBlockedError) || error.reason === 'unresolvable') addresses = undefined;
    else
      throw unprocessable(`config.url: ${error.message}.`, {
        errors: [{ field: 'config.url', message: error.message }],
      });
  }
  const problem = transportProblem(url, startTls, addresses, outbound.allowsLoopback);
  if (problem)
    throw unprocessable(problem, { code: 'insecure_transport', errors: [{ field: 'config.url', message: problem }] });
}

function directoryOf(connection: Connection, pageSize?: number) {
  return createLdapDirectory({
    url: connection.settings.baseUrl,
    settings: settingsOf(connection.settings),
    bindPassword: connection.secret,
    outbound: connection.outbound,
    pageSize,
  });
}

/**
 * `ldap`: Active Directory or OpenLDAP at `url` (stored as base_url), bound as `bind_dn` with the
 * bind password (sealed where `scim` seals its token); the rest of its config is its settings (LdapSettings).
 */
export const ldapType: ConnectorTypeDefinition<'ldap'> = {
  type: 'ldap',
  describe: { type: 'Active Directory or OpenLDAP over LDAPS or StartTLS', config: 'see LdapConfigInput' },
  schemas: { create: LdapConfigInput, patch: LdapConfigPatch, view: LdapConfigOutput },
  secret: { field: 'bind_password', name: 'bind password' },

  settingsFrom(config) {
    const { url, settings } = ldapSettingsFrom(config);
    return { baseUrl: url, settings };
  },
  changesFrom(config, current) {
    const { url, settings } = ldapSettingsFrom(config, { url: current.baseUrl, settings: settingsOf(current) });
    return { baseUrl: url, settings };
  },
  reachedThrough: ['url', 'start_tls'],
  assertReachable: (settings, outbound) =>
    assertLdapReachable(settings.baseUrl, settingsOf(settings).startTls, outbound),
  configJson(settings): LdapConfigOutput {
    const ldap = settingsOf(settings);
    return {
      flavor: ldap.flavor,
      url: settings.baseUrl,
      start_tls: ldap.startTls,
      bind_dn: ldap.bindDn,
      bind_password_set: true,
      base_dn: ldap.baseDn,
      users_ou: ldap.usersOu,
      disabled_ou: ldap.disabledOu,
      groups_base: ldap.groupsBase,
      ca_certificate: ldap.caCertificate,
      bundle_groups: ldap.bundleGroups,
      upn_suffix: ldap.upnSuffix,
      department_ous: ldap.departmentOus,
    };
  },

  // The LDAP client takes no abort signal: the sync ends its session with close().
  syncSource: (connection, options) => directoryOf(connection, options.pageSize),
  async probe(connection) {
    try {
      await directoryOf(connection).health();
      return null;
    } catch (error) {
      if (error instanceof LdapError) return error.message;
      throw error;
    }
  },
  open(connection, seal) {
    const accounts = createLdapAccounts({
      url: connection.settings.baseUrl,
      settings: settingsOf(connection.settings),
      bindPassword: connection.secret,
      outbound: connection.outbound,
    });
    return {
      ...accounts,
      // The password leaves the LDAP client sealed: the run stores it so, and only the
      // credentials endpoint opens it.
      async createUser(user) {
        const { id, userName, initialPassword, managerDn } = await accounts.createUser(user);
        return {
          id,
          userName,
          initialPasswordSealed: seal(initialPassword),
          ...(user.managerUserName ? { managerSet: managerDn !== null } : {}),
        };
      },
    };
  },
  failureOf: (error) =>
    error instanceof LdapError
      ? { message: error.message, kind: error.kind, retryable: error.retryable, name: error.kind }
      : null,
};
