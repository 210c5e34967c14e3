import { lookup } from 'node:dns/promises';
import { createOutbound, type Outbound, type OutboundOptions } from '@msp/outbound';

/** A public address the documentation names (example.com's) stand for. */
const EXAMPLE_ADDRESS = '93.184.215.14';

/**
 * The outbound policy of a service under test: what `pnpm start` runs (loopback allowed, for the
 * tests' receivers and directories on 127.0.0.1; nothing else internal), with the documentation
 * names (`hooks.example.com`, …) resolving to a public address even where the machine has no DNS.
 */
export function testOutbound(options: Omit<OutboundOptions, 'allowLoopback' | 'lookup'> = {}): Outbound {
  return createOutbound({
    ...options,
    allowLoopback: true,
    lookup: async (hostname) =>
      /(^|\.)example\.(com|org|net)$/i.test(hostname)
        ? [EXAMPLE_ADDRESS]
        : (await lookup(hostname, { all: true, verbatim: true })).map((result) => result.address),
  });
}
