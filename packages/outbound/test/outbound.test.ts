import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as OutboundModule from '../src';
import {
  createOutbound,
  internalAddressReason,
  OutboundBlockedError,
  OutboundResponseTooLargeError,
  OutboundTimeoutError,
  parseAllowlist,
} from '../src';
import { startDnsServer } from './dns-server';

const publicLookup = async () => ['93.184.215.14'];

describe('internal addresses', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['169.254.169.254', 'a link-local address (cloud metadata)'],
    ['10.1.2.3', 'a private address'],
    ['172.20.0.1', 'a private address'],
    ['192.168.1.10', 'a private address'],
    ['fd12:3456::1', 'a unique-local (private) address'],
    ['fe80::1', 'a link-local address'],
    ['0.0.0.0', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['::ffff:127.0.0.1', 'an IPv4-mapped IPv6 address (of 127.0.0.1)'],
    ['::ffff:7f00:1', 'an IPv4-mapped IPv6 address (of 127.0.0.1)'],
    ['::ffff:5db8:d70e', 'an IPv4-mapped IPv6 address (of 93.184.215.14)'],
    ['::7f00:1', 'an IPv4-compatible IPv6 address'],
    ['64:ff9b::a9fe:a9fe', 'a NAT64 address (it reaches an IPv4 address through a translator)'],
    ['2002:7f00:1::1', 'a 6to4 address (it embeds an IPv4 address)'],
    ['224.0.0.251', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['255.255.255.255', 'the broadcast address'],
    ['240.0.0.1', 'a reserved address (documentation, benchmarking or future use)'],
    ['198.18.0.1', 'a reserved address (documentation, benchmarking or future use)'],
    ['198.19.255.254', 'a reserved address (documentation, benchmarking or future use)'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
  ])('When the address is %s, then it is %s', (address, reason) => {
    expect(internalAddressReason(address)).toBe(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111', '172.32.0.1'])(
    'When the address is %s, then it is public',
    (address) => {
      expect(internalAddressReason(address)).toBeUndefined();
    },
  );
});

describe('the allow-list', () => {
  it('When entries are host names, IPs and CIDRs, then they are accepted', () => {
    expect(parseAllowlist(' scim.internal, 10.0.0.0/8 ,::1,127.0.0.1')).toEqual([
      'scim.internal',
      '10.0.0.0/8',
      '::1',
      '127.0.0.1',
    ]);
    expect(parseAllowlist(undefined)).toEqual([]);
  });

  it.each(['10.0.0.0/33', 'http://x', 'a b', '10.0.0.0/8/1'])(
    'When an entry is %s, then it is refused naming it',
    (entry) => {
      expect(() => parseAllowlist(entry)).toThrow(`"${entry}"`);
    },
  );
});

describe('check', () => {
  const production = (allowlist: string[] = [], lookup = publicLookup) => createOutbound({ allowlist, lookup });

  it('When a URL names the metadata address, then it is refused and the message says why', async () => {
    const error = await production()
      .check('http://169.254.169.254/latest/meta-data')
      .catch((e) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect(error.message).toContain('link-local');
    expect(error.message).toContain('OUTBOUND_ALLOWLIST');
    expect(error.reason).toBe('internal');
  });

  it.each([
    'http://127.0.0.1:8080/scim',
    'http://[::1]/scim',
    'https://10.0.0.5/scim',
    'http://0.0.0.0/',
    'http://[fd00::1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[ff02::1]/',
    'http://224.0.0.1/',
    'http://240.0.0.1/',
    'http://198.18.0.1/',
  ])('When no option is given (any mode) and the URL is %s, then it is refused', async (url) => {
    await expect(production().check(url)).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('When a public-looking name resolves to an internal address, then it is refused', async () => {
    const error = await production([], async () => ['93.184.215.14', '127.0.0.1'])
      .check('https://rebind.example.com/scim')
      .catch((e) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect(error.message).toContain('resolved to 127.0.0.1');
  });

  it('When a name resolves only to public addresses, then it is allowed', async () => {
    await expect(production().check('https://scim.example.com/v2')).resolves.toBeUndefined();
  });

  it('When a name cannot be resolved, then it is refused', async () => {
    const error = await production([], async () => {
      throw new Error('ENOTFOUND');
    })
      .check('https://nowhere.invalid/')
      .catch((e) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect(error.reason).toBe('unresolvable');
  });

  it('When the allow-list names the host, an IP or a CIDR, then internal targets are allowed', async () => {
    await expect(production(['scim.corp']).check('http://scim.corp/v2')).resolves.toBeUndefined();
    await expect(production(['127.0.0.1']).check('http://127.0.0.1:9000/')).resolves.toBeUndefined();
    await expect(
      production(['10.0.0.0/8'], async () => ['10.2.3.4']).check('http://dir.corp/'),
    ).resolves.toBeUndefined();
    await expect(
      production(['10.0.0.0/8'], async () => ['192.168.0.1']).check('http://dir.corp/'),
    ).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('When loopback is allowed (pnpm start), then loopback may be called, nothing else internal, and only http(s)', async () => {
    const dev = createOutbound({ allowLoopback: true, lookup: async () => ['127.0.0.1'] });
    await expect(dev.check('http://127.0.0.1:1/')).resolves.toBeUndefined();
    await expect(dev.check('http://[::1]:1/')).resolves.toBeUndefined();
    await expect(dev.check('http://localhost:1/')).resolves.toBeUndefined();
    await expect(dev.check('http://169.254.169.254/')).rejects.toBeInstanceOf(OutboundBlockedError);
    await expect(dev.check('http://10.0.0.1/')).rejects.toBeInstanceOf(OutboundBlockedError);
    await expect(dev.check('http://[::ffff:7f00:1]/')).rejects.toBeInstanceOf(OutboundBlockedError);
    await expect(dev.check('file:///etc/passwd')).rejects.toBeInstanceOf(OutboundBlockedError);
    await expect(dev.check('not a url')).rejects.toBeInstanceOf(OutboundBlockedError);
  });
});

describe('fetch', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 2000).unref();
      if (req.url === '/redirect') return res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      if (req.url === '/big') return res.end('x'.repeat(2048)); // with Content-Length
      if (req.url === '/big-chunked') {
        res.write('x'.repeat(1000));
        return setTimeout(() => res.end('x'.repeat(1000)), 10).unref();
      }
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('When the target answers, then its response comes back', async () => {
    const response = await createOutbound({ allowLoopback: true }).fetch(`${base}/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
  });

  it('When the target does not answer in time, then an OutboundTimeoutError names the origin', async () => {
    const error = await createOutbound({ allowLoopback: true, timeoutMs: 100 })
      .fetch(`${base}/slow`)
      .catch((e) => e);
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    expect(error.message).toBe(`${base} did not answer within 100 ms`);
  });

  it('When the target redirects, then the redirect is not followed, even when the caller asks for it', async () => {
    const outbound = createOutbound({ allowLoopback: true });
    expect((await outbound.fetch(`${base}/redirect`)).status).toBe(302);
    expect((await outbound.fetch(`${base}/redirect`, { redirect: 'follow' })).status).toBe(302);
  });

  it('When the body is larger than the limit, then reading it fails with an error naming the limit', async () => {
    const outbound = createOutbound({ allowLoopback: true, maxResponseBytes: 1024 });
    const declared = await outbound.fetch(`${base}/big`).catch((e) => e);
    expect(declared).toBeInstanceOf(OutboundResponseTooLargeError);
    expect(declared.message).toBe(`${base} answered with a body larger than 1024 bytes, more than this service reads`);
    const response = await outbound.fetch(`${base}/big-chunked`);
    await expect(response.text()).rejects.toBeInstanceOf(OutboundResponseTooLargeError);
    expect(
      await (await createOutbound({ allowLoopback: true, maxResponseBytes: 2048 }).fetch(`${base}/big`)).text(),
    ).toHaveLength(2048);
  });

  it('When a service only imports the package and makes its policy, then undici is not loaded; the first call loads it', async () => {
    // A module registry of its own, where loading undici is seen (and undici is the real one).
    let undiciLoaded = false;
    let isolated: typeof OutboundModule | undefined;
    jest.isolateModules(() => {
      jest.doMock('undici', () => {
        undiciLoaded = true;
        return jest.requireActual('undici');
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      isolated = require('../src') as typeof OutboundModule;
    });
    const outbound = isolated!.createOutbound({ allowLoopback: true });
    await outbound.check(`${base}/`);
    expect(undiciLoaded).toBe(false);
    const response = await outbound.fetch(`${base}/`);
    expect(await response.text()).toBe('ok');
    expect(undiciLoaded).toBe(true);
    jest.dontMock('undici');
  });

  it('When nothing allows loopback (the default in every mode), then nothing is sent to it', async () => {
    await expect(createOutbound().fetch(`${base}/`)).rejects.toBeInstanceOf(OutboundBlockedError);
  });
});

describe('the address is checked where the socket connects', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits += 1;
      res.end('inside');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it(
    'When the DNS answer changes from a public address at the check to 127.0.0.1 at ' +
      'the connection, then the call is refused and nothing arrives',
    async () => {
      const dns = await startDnsServer(['93.184.215.14', '127.0.0.1']);
      try {
        const outbound = createOutbound({ lookup: dns.lookup });
        const before = hits;
        const error = await outbound.fetch(`http://rebind.example.test:${port}/hook`).catch((e) => e);
        expect(error).toBeInstanceOf(OutboundBlockedError);
        expect(error.message).toBe(
          'rebind.example.test is resolved to 127.0.0.1, a loopback address, which this service may not call (add it to OUTBOUND_ALLOWLIST to allow it)',
        );
        // The check asked once (public), the connection asked again (loopback) and was refused.
        expect(dns.queries).toEqual(['rebind.example.test', 'rebind.example.test']);
        expect(hits).toBe(before);
      } finally {
        await dns.close();
      }
    },
  );

  it('When the connection resolves to an allowed address, then it connects to the address its lookup gave', async () => {
    const dns = await startDnsServer(['127.0.0.1']);
    try {
      const response = await createOutbound({ allowLoopback: true, lookup: dns.lookup }).fetch(
        `http://receiver.example.test:${port}/hook`,
      );
      expect(await response.text()).toBe('inside');
      expect(dns.queries.length).toBe(2);
    } finally {
      await dns.close();
    }
  });
});
