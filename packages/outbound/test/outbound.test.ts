import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutbound, internalAddressReason, OutboundBlockedError, OutboundTimeoutError, parseAllowlist } from '../src';

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
    ['::ffff:127.0.0.1', 'a loopback address'],
  ])('When the address is %s, then it is %s', (address, reason) => {
    expect(internalAddressReason(address)).toBe(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111', '172.32.0.1'])('When the address is %s, then it is public', (address) => {
    expect(internalAddressReason(address)).toBeUndefined();
  });
});

describe('the allow-list', () => {
  it('When entries are host names, IPs and CIDRs, then they are accepted', () => {
    expect(parseAllowlist(' scim.internal, 10.0.0.0/8 ,::1,127.0.0.1')).toEqual(['scim.internal', '10.0.0.0/8', '::1', '127.0.0.1']);
    expect(parseAllowlist(undefined)).toEqual([]);
  });

  it.each(['10.0.0.0/33', 'http://x', 'a b', '10.0.0.0/8/1'])('When an entry is %s, then it is refused naming it', (entry) => {
    expect(() => parseAllowlist(entry)).toThrow(`"${entry}"`);
  });
});

describe('check', () => {
  const production = (allowlist: string[] = [], lookup = publicLookup) => createOutbound({ production: true, allowlist, lookup });

  it('When in production a URL names the metadata address, then it is refused and the message says why', async () => {
    const error = await production().check('http://169.254.169.254/latest/meta-data').catch((e) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect(error.message).toContain('link-local');
    expect(error.message).toContain('OUTBOUND_ALLOWLIST');
    expect(error.reason).toBe('internal');
  });

  it.each(['http://127.0.0.1:8080/scim', 'http://[::1]/scim', 'https://10.0.0.5/scim', 'http://0.0.0.0/', 'http://[fd00::1]/'])(
    'When in production the URL is %s, then it is refused',
    async (url) => {
      await expect(production().check(url)).rejects.toBeInstanceOf(OutboundBlockedError);
    },
  );

  it('When a public-looking name resolves to an internal address, then it is refused', async () => {
    const error = await production([], async () => ['93.184.215.14', '127.0.0.1']).check('https://rebind.example.com/scim').catch((e) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect(error.message).toContain('resolved to 127.0.0.1');
  });

  it('When a name resolves only to public addresses, then it is allowed', async () => {
    await expect(production().check('https://scim.example.com/v2')).resolves.toBeUndefined();
  });

  it('When a name cannot be resolved in production, then it is refused', async () => {
    const error = await production([], async () => { throw new Error('ENOTFOUND'); }).check('https://nowhere.invalid/').catch((e) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect(error.reason).toBe('unresolvable');
  });

  it('When the allow-list names the host, an IP or a CIDR, then internal targets are allowed', async () => {
    await expect(production(['scim.corp']).check('http://scim.corp/v2')).resolves.toBeUndefined();
    await expect(production(['127.0.0.1']).check('http://127.0.0.1:9000/')).resolves.toBeUndefined();
    await expect(production(['10.0.0.0/8'], async () => ['10.2.3.4']).check('http://dir.corp/')).resolves.toBeUndefined();
    await expect(production(['10.0.0.0/8'], async () => ['192.168.0.1']).check('http://dir.corp/')).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('When not in production, then internal addresses are allowed, but only http(s)', async () => {
    const dev = createOutbound({ production: false });
    await expect(dev.check('http://127.0.0.1:1/')).resolves.toBeUndefined();
    await expect(dev.check('http://169.254.169.254/')).resolves.toBeUndefined();
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
    const response = await createOutbound({ production: false }).fetch(`${base}/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
  });

  it('When the target does not answer in time, then an OutboundTimeoutError names the origin', async () => {
    const error = await createOutbound({ production: false, timeoutMs: 100 }).fetch(`${base}/slow`).catch((e) => e);
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    expect(error.message).toBe(`${base} did not answer within 100 ms`);
  });

  it('When the target redirects, then the redirect is not followed', async () => {
    const response = await createOutbound({ production: false }).fetch(`${base}/redirect`);
    expect(response.status).toBe(302);
  });

  it('When in production the target is loopback and not allowed, then nothing is sent', async () => {
    await expect(createOutbound({ production: true }).fetch(`${base}/`)).rejects.toBeInstanceOf(OutboundBlockedError);
  });
});
