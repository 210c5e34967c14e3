import * as net from 'node:net';
import * as tls from 'node:tls';
import {
  AlreadyExistsError,
  BusyError,
  Client,
  ConfidentialityRequiredError,
  ConstraintViolationError,
  InsufficientAccessError,
  InvalidCredentialsError,
  NoSuchObjectError,
  StrongAuthRequiredError,
  TimeLimitExceededError,
  UnavailableError,
  UnwillingToPerformError,
} from 'ldapts';
import { OutboundBlockedError, type Outbound } from '@msp/outbound';

/**
 * One bound LDAP session to a connector's server. The host is resolved and judged by link's
 * outbound policy (OUTBOUND_ALLOWED_NETWORKS and the rest) and the socket connects to that judged
 * address, so a DNS answer that changes afterwards cannot lead elsewhere; TLS still verifies the
 * certificate against the host name of the URL.
 */

export type LdapErrorKind =
  | 'directory_unreachable'
  | 'credentials_refused'
  | 'certificate'
  | 'insecure_transport'
  | 'blocked'
  | 'insufficient_access'
  | 'account_exists'
  | 'ou_missing'
  | 'password_policy'
  | 'rejected';

export class LdapError extends Error {
  constructor(
    message: string,
    readonly kind: LdapErrorKind,
    /** Busy, unavailable, unreachable, timeouts: the same call may succeed later. */
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'LdapError';
  }
}

export interface LdapEndpoint {
  url: string;
  startTls: boolean;
  caCertificate: string | null;
  bindDn: string;
  bindPassword: string;
}

const TLS_WORDS: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    'was issued by a CA link does not trust (unable to verify the first certificate): set config.ca_certificate to the PEM of the CA that issued it',
  SELF_SIGNED_CERT_IN_CHAIN:
    "chains to a CA link does not trust (self-signed certificate in the chain): set config.ca_certificate to that CA's PEM",
  DEPTH_ZERO_SELF_SIGNED_CERT:
    'is self-signed: set config.ca_certificate to it, or give the server a certificate from a CA',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    'was issued by a CA link does not trust: set config.ca_certificate to the PEM of the CA that issued it',
  CERT_HAS_EXPIRED: "has expired: renew the server's certificate",
  CERT_NOT_YET_VALID: "is not valid yet: check the server's clock and certificate",
  ERR_TLS_CERT_ALTNAME_INVALID:
    'does not name the host of config.url: use the host name the certificate was issued for',
};

/** A failure of the LDAP call `what` in words a technician can act on, and whether to try again. */
export function ldapErrorOf(error: unknown, origin: string, what: string): LdapError {
  if (error instanceof LdapError) return error;
  if (error instanceof OutboundBlockedError)
    return new LdapError(`the connector may not connect to ${origin}: ${error.message}`, 'blocked', false);
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && TLS_WORDS[code])
    return new LdapError(`the certificate of ${origin} ${TLS_WORDS[code]} (${message})`, 'certificate', false);
  if (error instanceof InvalidCredentialsError) {
    return new LdapError(
      `${origin} refused the bind as config.bind_dn (invalid credentials): check the bind DN and set ` +
        'the right config.bind_password; the account may also be disabled or locked',
      'credentials_refused',
      false,
    );
  }
  if (error instanceof StrongAuthRequiredError || error instanceof ConfidentialityRequiredError) {
    return new LdapError(
      `${origin} requires an encrypted connection for ${what}: use ldaps:// or start_tls: true`,
      'insecure_transport',
      false,
    );
  }
  if (error instanceof InsufficientAccessError)
    return new LdapError(
      `the bind account may not do ${what} at ${origin} (insufficient access): grant it the rights docs/directories.md lists`,
      'insufficient_access',
      false,
    );
  if (error instanceof AlreadyExistsError)
    return new LdapError(`${what} at ${origin}: the entry already exists`, 'account_exists', false);
  if (error instanceof NoSuchObjectError)
    return new LdapError(
      `${what} at ${origin}: no such entry (${message}); check the OU and DNs of the connector's config`,
      'ou_missing',
      false,
    );
  if (error instanceof ConstraintViolationError && /0000052D/i.test(message)) {
    return new LdapError(
      `${origin} refused the password for ${what}: it does not meet the domain's password policy (length, complexity or history)`,
      'password_policy',
      false,
    );
  }
  if (error instanceof BusyError || error instanceof UnavailableError || error instanceof TimeLimitExceededError) {
    return new LdapError(`${origin} is busy or unavailable (${message}) for ${what}`, 'directory_unreachable', true);
  }
  if (error instanceof UnwillingToPerformError && /0000052D|password/i.test(message)) {
    return new LdapError(
      `${origin} refused the password for ${what} (${message}): it does not meet the password policy, or the connection is not encrypted`,
      'password_policy',
      false,
    );
  }
  if (
    typeof code === 'string' &&
    /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN)$/.test(code)
  ) {
    return new LdapError(
      `${origin} could not be reached for ${what} (${code}): check config.url, the VPN to the customer's network and that the server listens`,
      'directory_unreachable',
      true,
    );
  }
  if (/timeout|timed out|closed|socket/i.test(message))
    return new LdapError(`${origin} did not answer ${what} (${message})`, 'directory_unreachable', true);
  return new LdapError(`${origin} refused ${what}: ${message}`, 'rejected', false);
}

export function originOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return url;
  }
}

/** Opens a session and binds as the connector's bind DN; the caller unbinds. */
export async function openLdapSession(endpoint: LdapEndpoint, outbound: Outbound): Promise<Client> {
  const origin = originOf(endpoint.url);
  const url = new URL(endpoint.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let address: string;
  try {
    [address = host] = await outbound.addressesFor(host);
  } catch (error) {
    if (error instanceof OutboundBlockedError && error.reason === 'unresolvable') {
      throw new LdapError(
        `the host ${host} of config.url could not be resolved: check the name and link's DNS (the VPN)`,
        'directory_unreachable',
        true,
      );
    }
    throw ldapErrorOf(error, origin, 'connect');
  }
  // The certificate is verified against the URL's host name (SNI only for a name, not an address).
  const tlsIdentity: tls.ConnectionOptions = {
    ...(endpoint.caCertificate ? { ca: endpoint.caCertificate } : {}),
    ...(net.isIP(host) ? {} : { servername: host }),
    checkServerIdentity: (_name, certificate) => tls.checkServerIdentity(host, certificate),
  };
  const ldaps = url.protocol === 'ldaps:';
  // A session carries several requests at once (a sync's searches share it): with Nagle's
  // algorithm a small request written while another is unanswered would wait for the server's
  // delayed acknowledgement.
  const client = new Client({
    url: endpoint.url,
    timeout: outbound.timeoutMs,
    connectTimeout: outbound.timeoutMs,
    createConnection: ((port: number) =>
      net.connect({ port, host: address, noDelay: true })) as unknown as typeof net.connect,
    createSecureConnection: ((
      portOrOptions: number | tls.ConnectionOptions,
      _host?: string,
      options?: tls.ConnectionOptions,
    ) =>
      (typeof portOrOptions === 'number'
        ? tls.connect(portOrOptions, address, { ...options, ...tlsIdentity })
        : tls.connect({ ...portOrOptions, ...tlsIdentity })
      ).setNoDelay(true)) as unknown as typeof tls.connect,
    // ldaps: TLS from the first byte; the options themselves come from createSecureConnection.
    ...(ldaps ? { tlsOptions: { rejectUnauthorized: true } } : {}),
  });
  try {
    if (!ldaps && endpoint.startTls) await client.startTLS({ rejectUnauthorized: true });
    await client.bind(endpoint.bindDn, endpoint.bindPassword);
    return client;
  } catch (error) {
    await client.unbind().catch(() => undefined);
    throw ldapErrorOf(error, origin, 'bind');
  }
}
