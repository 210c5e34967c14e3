import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type * as Undici from 'undici';

// undici (many modules, a sizeable heap) is loaded by the first outbound call, not at the start of
// every service: most instances call no webhook receiver or directory for a long time, if ever.
let undici: typeof Undici | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadUndici = (): typeof Undici => (undici ??= require('undici') as typeof Undici);

/**
 * Calls a service makes to addresses its callers chose (webhooks, SCIM directories). Such a URL
 * must not reach the service's own network: only public unicast addresses may be called; loopback,
 * link-local (the cloud metadata endpoint 169.254.169.254), private, shared, multicast, reserved
 * and the IPv6 forms that lead back to IPv4 (IPv4-mapped, NAT64, 6to4) are refused, in every
 * mode, unless an allow-list names them. Loopback can be allowed as a whole (`pnpm start` does, so
 * a developer can point a webhook at a receiver on localhost).
 *
 * The addresses are checked where the socket connects (the lookup of the HTTP agent), not only
 * before the call: a DNS answer that changes between a check and the connection (rebinding)
 * cannot get through.
 */

export interface OutboundOptions {
  /** Let loopback addresses (127.0.0.0/8, ::1) through: OUTBOUND_ALLOW_LOOPBACK, set by `pnpm start`. */
  allowLoopback?: boolean;
  /** Host names, IP addresses or CIDR ranges that may be reached even though internal. */
  allowlist?: readonly string[];
  /** Every call ends after this long (default 10 s). */
  timeoutMs?: number;
  /** The most of a response body that is read (default 10 MB); past it, reading fails (OutboundResponseTooLargeError). */
  maxResponseBytes?: number;
  /** Name resolution, at the check and at connection time; tests replace it with a resolver they control. */
  lookup?: (hostname: string) => Promise<string[]>;
}

/** A URL the policy does not let this service call; `message` says which and why, never a secret. */
export class OutboundBlockedError extends Error {
  readonly code = 'outbound_blocked';
  constructor(
    message: string,
    /** `internal`: an address the service may not call; `unresolvable`: the name did not resolve; `invalid`: not an http(s) URL. */
    readonly reason: 'internal' | 'unresolvable' | 'invalid' = 'internal',
  ) {
    super(message);
    this.name = 'OutboundBlockedError';
  }
}

/** The call did not answer within the timeout. */
export class OutboundTimeoutError extends Error {
  readonly code = 'outbound_timeout';
  constructor(
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`${url} did not answer within ${timeoutMs} ms`);
    this.name = 'OutboundTimeoutError';
  }
}

/** The answer's body is larger than the service reads. */
export class OutboundResponseTooLargeError extends Error {
  readonly code = 'outbound_response_too_large';
  constructor(
    readonly url: string,
    readonly maxBytes: number,
  ) {
    super(`${url} answered with a body larger than ${maxBytes} bytes, more than this service reads`);
    this.name = 'OutboundResponseTooLargeError';
  }
}

export const DEFAULT_OUTBOUND_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

// ipaddr.js names every special-purpose range (IANA's registries); only `unicast` (none of them)
// is public. These are the words a technician reads for each.
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  private: 'a private address',
  uniqueLocal: 'a unique-local (private) address',
  reserved: 'a reserved address (documentation, benchmarking or future use)',
  rfc6052: 'a NAT64 address (it reaches an IPv4 address through a translator)',
  '6to4': 'a 6to4 address (it embeds an IPv4 address)',
  teredo: 'a Teredo address (it embeds an IPv4 address)',
  rfc6145: 'an IPv4-translated address',
  deprecatedSiteLocal: 'a site-local address',
};

/** ::/96 (less ::1 and ::): the deprecated IPv4-compatible form, another way to write an IPv4 address. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** Why this IP address may not be called, or undefined when it is a public one. */
export function internalAddressReason(address: string): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[(.*)\]$/, '$1'));
  } catch {
    return undefined;
  }
  const range = ip.range();
  if (ip.kind() === 'ipv6' && range === 'ipv4Mapped') {
    // ::ffff:7f00:1 and ::ffff:127.0.0.1 alike: an IPv4 address in disguise, refused in any case.
    return `an IPv4-mapped IPv6 address (of ${(ip as ipaddr.IPv6).toIPv4Address().toString()})`;
  }
  if (range === 'unicast') {
    return ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE) ? 'an IPv4-compatible IPv6 address' : undefined;
  }
  if (range === 'linkLocal' && ip.kind() === 'ipv4') return 'a link-local address (cloud metadata)';
  return RANGE_WORDS[range] ?? `a special-purpose address (${range})`;
}

function isLoopback(address: string): boolean {
  try {
    return ipaddr.parse(address).range() === 'loopback';
  } catch {
    return false;
  }
}

/**
 * Parses `OUTBOUND_ALLOWLIST`: comma-separated host names, IP addresses or CIDR ranges.
 * Throws naming the entry that is none of these.
 */
export function parseAllowlist(value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
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

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export interface Outbound {
  /**
   * Refuses (OutboundBlockedError) a URL that is not http(s), or whose host is or resolves to an
   * address the service may not call. Every resolved address counts: a name with one public and
   * one internal address is refused. The connection checks again what it connects to.
   */
  check(url: string | URL): Promise<void>;
  /**
   * `fetch` after `check`, through a connection that refuses internal addresses itself; ended after
   * the timeout (OutboundTimeoutError); redirects never followed, whatever `init` says; the body
   * read up to the size limit (OutboundResponseTooLargeError).
   */
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
  /**
   * The addresses of `host` a socket may connect to, judged as `check` judges a URL's (an
   * OutboundBlockedError otherwise): for protocols other than HTTP (LDAP), whose client connects to
   * the address answered here rather than resolving the name again.
   */
  addressesFor(host: string): Promise<string[]>;
  /** Whether loopback addresses are let through (OUTBOUND_ALLOW_LOOPBACK). */
  readonly allowsLoopback: boolean;
  readonly timeoutMs: number;
}

export function createOutbound(options: OutboundOptions = {}): Outbound {
  const allowed = allowlistMatcher(options.allowlist ?? []);
  const resolve = options.lookup ?? systemLookup;
  const timeoutMs = options.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  /** The refusal for connecting to `address` as `host` (`shown` as the URL has it), or undefined when it may be called. */
  function refusal(host: string, shown: string, address: string): OutboundBlockedError | undefined {
    const reason = internalAddressReason(address);
    if (!reason || allowed.address(address) || (options.allowLoopback && isLoopback(address))) return undefined;
    return new OutboundBlockedError(
      `${shown} is ${host === address ? '' : `resolved to ${address}, `}${reason}, which this service may not call (add it to OUTBOUND_ALLOWLIST to allow it)`,
    );
  }

  async function addressesOf(host: string): Promise<string[]> {
    if (isIP(host)) return [host];
    try {
      const addresses = await resolve(host);
      if (addresses.length) return addresses;
    } catch {
      /* said below */
    }
    throw new OutboundBlockedError(`the host ${host} could not be resolved`, 'unresolvable');
  }

  /** Resolves and judges every address of `host`; the connection is made only to judged ones. */
  async function permittedAddresses(host: string, shown = host): Promise<string[]> {
    const addresses = await addressesOf(host);
    if (allowed.host(host)) return addresses;
    for (const address of addresses) {
      const refused = refusal(host, shown, address);
      if (refused) throw refused;
    }
    return addresses;
  }

  // The agent's own lookup: the address a socket connects to is the one judged here, whatever an
  // earlier resolution said. (An IP literal is not looked up; `check` judges it, and the URL
  // cannot change it.)
  function connectLookup(hostname: string, lookupOptions: LookupOptions, callback: LookupCallback) {
    permittedAddresses(hostname.replace(/^\[(.*)\]$/, '$1')).then(
      (addresses) => {
        const family = lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : lookupOptions.family;
        const usable = addresses.filter((address) => !family || isIP(address) === family);
        if (!usable.length) {
          callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), []);
        } else if (lookupOptions.all) {
          callback(
            null,
            usable.map((address) => ({ address, family: isIP(address) })),
          );
        } else {
          callback(null, usable[0]!, isIP(usable[0]!));
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  }

  let agent: Undici.Agent | undefined;
  const agentOf = () => (agent ??= new (loadUndici().Agent)({ connect: { lookup: connectLookup } }));

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
    const host = bareHost(url);
    if (allowed.host(host)) return;
    await permittedAddresses(host, url.host);
  }

  /** The same answer, its body failing once more than `maxResponseBytes` came. */
  function capped(response: Response, origin: string): Response {
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > maxResponseBytes) {
      void response.body?.cancel().catch(() => undefined);
      throw new OutboundResponseTooLargeError(origin, maxResponseBytes);
    }
    if (!response.body) return response;
    let read = 0;
    const limit = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read > maxResponseBytes) controller.error(new OutboundResponseTooLargeError(origin, maxResponseBytes));
        else controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(limit), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }

  return {
    check,
    timeoutMs,
    allowsLoopback: options.allowLoopback ?? false,
    addressesFor: (host) => permittedAddresses(host.replace(/^\[(.*)\]$/, '$1')),
    async fetch(target, init = {}) {
      await check(target);
      const origin = new URL(target).origin;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
      let response: Response;
      try {
        // Redirects are not followed, whatever the caller asks: a public URL could otherwise send
        // the call inside. The dispatcher is the agent that checks addresses at connection time.
        response = (await loadUndici().fetch(target, {
          ...(init as Parameters<typeof Undici.fetch>[1]),
          redirect: 'manual',
          signal,
          dispatcher: agentOf(),
        })) as unknown as Response;
      } catch (error) {
        if (timeout.aborted) throw new OutboundTimeoutError(origin, timeoutMs);
        const cause = (error as Error & { cause?: unknown }).cause;
        if (cause instanceof OutboundBlockedError) throw cause;
        throw error;
      }
      return capped(response, origin);
    },
  };
}

/** The service's outbound policy from its configuration (OUTBOUND_ALLOW_LOOPBACK, OUTBOUND_ALLOWLIST, OUTBOUND_TIMEOUT_MS). */
export function outboundFromConfig(config: {
  OUTBOUND_ALLOW_LOOPBACK?: boolean;
  OUTBOUND_ALLOWLIST?: string;
  OUTBOUND_TIMEOUT_MS: number;
}): Outbound {
  return createOutbound({
    allowLoopback: config.OUTBOUND_ALLOW_LOOPBACK ?? false,
    allowlist: parseAllowlist(config.OUTBOUND_ALLOWLIST),
    timeoutMs: config.OUTBOUND_TIMEOUT_MS,
  });
}
