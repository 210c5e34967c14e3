import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Calls a service makes to addresses its callers chose (SCIM connectors today, webhooks later).
 * In production such a URL must not reach the service's own network: loopback, link-local (the
 * cloud metadata endpoint 169.254.169.254), private and unique-local ranges, and the unspecified
 * address are refused unless an allow-list names them. Outside production everything is allowed,
 * so a developer can point a connector at a directory on localhost.
 */

export interface OutboundOptions {
  /** Refuse internal addresses (NODE_ENV=production). */
  production: boolean;
  /** Host names, IP addresses or CIDR ranges that may be reached even though internal. */
  allowlist?: readonly string[];
  /** Every call ends after this long (default 10 s). */
  timeoutMs?: number;
  /** Name resolution; tests replace it to play a DNS name that points inside. */
  lookup?: (hostname: string) => Promise<string[]>;
}

/** A URL the policy does not let this service call; `message` says which and why, never a secret. */
export class OutboundBlockedError extends Error {
  readonly code = 'outbound_blocked';
  constructor(
    message: string,
    /** `internal`: an address production may not call; `unresolvable`: the name did not resolve; `invalid`: not an http(s) URL. */
    readonly reason: 'internal' | 'unresolvable' | 'invalid' = 'internal',
  ) {
    super(message);
    this.name = 'OutboundBlockedError';
  }
}

/** The call did not answer within the timeout. */
export class OutboundTimeoutError extends Error {
  readonly code = 'outbound_timeout';
  constructor(readonly url: string, readonly timeoutMs: number) {
    super(`${url} did not answer within ${timeoutMs} ms`);
    this.name = 'OutboundTimeoutError';
  }
}

export const DEFAULT_OUTBOUND_TIMEOUT_MS = 10_000;

// The ranges a caller-chosen URL may not reach in production, with the words a technician reads.
const INTERNAL_RANGES: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a shared (carrier-grade NAT) address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address (cloud metadata)'],
  ['::', 128, 'ipv6', 'an unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['fc00::', 7, 'ipv6', 'a unique-local (private) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
];

const internal = INTERNAL_RANGES.map(([network, prefix, family, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, reason };
});

/** Why this IP address is internal, or undefined when it is a public one. */
export function internalAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (!family) return undefined;
  // IPv4-mapped IPv6 (::ffff:127.0.0.1) is the IPv4 address in disguise.
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  const [ip, type] = mapped ? [mapped, 'ipv4' as const] : [address, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
  return internal.find(({ list }) => list.check(ip, type))?.reason;
}

/**
 * Parses `OUTBOUND_ALLOWLIST`: comma-separated host names, IP addresses or CIDR ranges.
 * Throws naming the entry that is none of these.
 */
export function parseAllowlist(value: string | undefined): string[] {
  const entries = (value ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const valid =
      extra === undefined &&
      (prefix === undefined
        ? isIP(address) > 0 || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(address)
        : isIP(address) > 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (isIP(address) === 4 ? 32 : 128));
    if (!valid) throw new Error(`"${entry}" is neither a host name, an IP address nor a CIDR range`);
  }
  return entries;
}

function allowlistMatcher(entries: readonly string[]) {
  const hosts = new Set<string>();
  const addresses = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    if (!family) hosts.add(address.toLowerCase().replace(/\.$/, ''));
    else if (prefix === undefined) addresses.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
    else addresses.addSubnet(address, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
  }
  return {
    host: (hostname: string) => hosts.has(hostname.toLowerCase().replace(/\.$/, '')),
    address: (ip: string) => addresses.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6'),
  };
}

async function systemLookup(hostname: string): Promise<string[]> {
  const results = await dnsLookup(hostname, { all: true, verbatim: true });
  return results.map((result) => result.address);
}

/** The URL's host as the resolver and the IP checks want it (no IPv6 brackets). */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** OUTBOUND_ALLOWLIST's problem for a service's config check, or none. */
export function allowlistProblems(value: string | undefined): string[] {
  try {
    parseAllowlist(value);
    return [];
  } catch (error) {
    return [`OUTBOUND_ALLOWLIST ${(error as Error).message}`];
  }
}

export interface Outbound {
  /**
   * Refuses (OutboundBlockedError) a URL that is not http(s) or, in production, whose host is or
   * resolves to an internal address. Every resolved address counts: a name with one public and
   * one internal address is refused, so DNS cannot smuggle an internal target past the check.
   */
  check(url: string | URL): Promise<void>;
  /** `fetch` after `check`, ended after the timeout (OutboundTimeoutError). */
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
  readonly timeoutMs: number;
}

export function createOutbound(options: OutboundOptions): Outbound {
  const allowed = allowlistMatcher(options.allowlist ?? []);
  const resolve = options.lookup ?? systemLookup;
  const timeoutMs = options.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;

  async function check(target: string | URL): Promise<void> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new OutboundBlockedError(`"${String(target)}" is not a URL`, 'invalid');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundBlockedError(`${url.origin} is not an http(s) URL`, 'invalid');
    }
    if (!options.production) return;
    const host = bareHost(url);
    if (allowed.host(host)) return;
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = await resolve(host);
      } catch {
        throw new OutboundBlockedError(`the host ${host} could not be resolved`, 'unresolvable');
      }
    }
    for (const address of addresses) {
      const reason = internalAddressReason(address);
      if (reason && !allowed.address(address)) {
        throw new OutboundBlockedError(
          `${url.host} is ${host === address ? '' : `resolved to ${address}, `}${reason}, which this service may not call in production (add it to OUTBOUND_ALLOWLIST to allow it)`,
        );
      }
    }
  }

  return {
    check,
    timeoutMs,
    async fetch(target, init = {}) {
      await check(target);
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
      try {
        // Redirects are not followed: a public URL could otherwise send the call inside.
        return await fetch(target, { redirect: 'manual', ...init, signal });
      } catch (error) {
        if (timeout.aborted) throw new OutboundTimeoutError(new URL(target).origin, timeoutMs);
        throw error;
      }
    },
  };
}

/** The service's outbound policy from its configuration (NODE_ENV, OUTBOUND_ALLOWLIST, OUTBOUND_TIMEOUT_MS). */
export function outboundFromConfig(config: { NODE_ENV: string; OUTBOUND_ALLOWLIST?: string; OUTBOUND_TIMEOUT_MS: number }): Outbound {
  return createOutbound({ production: config.NODE_ENV === 'production', allowlist: parseAllowlist(config.OUTBOUND_ALLOWLIST), timeoutMs: config.OUTBOUND_TIMEOUT_MS });
}
