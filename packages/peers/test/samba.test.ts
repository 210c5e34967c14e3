import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  BerWriter,
  Change,
  Client,
  Attribute,
  Control,
  InvalidCredentialsError,
  ConstraintViolationError,
  StrongAuthRequiredError,
} from 'ldapts';
import { adDirectory, adUser, objectGuidToString, startSambaDc, unicodePwd, type SambaDc } from '../src';

jest.setTimeout(180_000);

/** Asks AD for DNs with the GUID and SID in their string forms (flag 1), as AD's own tools show them. */
class ExtendedDnControl extends Control {
  constructor() {
    super('1.2.840.113556.1.4.529');
  }
  protected override writeControl(writer: BerWriter): void {
    const value = new BerWriter();
    value.startSequence();
    value.writeInt(1);
    value.endSequence();
    writer.writeBuffer(value.buffer, 4);
  }
}

function netnsExists(name: string): boolean {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .some((l) => l.split(' ')[0] === name);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('Samba AD DC', () => {
  let dc: SambaDc;
  beforeAll(async () => {
    dc = await startSambaDc({ usersOu: 'OU=Staff' });
  });
  afterAll(async () => {
    await dc?.stop();
  });

  it('When a suite starts a DC, then LDAPS answers with its rootDSE (naming contexts, DNS name, highest committed USN)', async () => {
    expect(dc.url).toBe(`ldaps://${dc.host}`);
    expect(dc.baseDn).toBe('DC=corp,DC=example');
    expect(dc.realm).toBe('CORP.EXAMPLE');
    const client = await dc.connect();
    try {
      const { searchEntries } = await client.search('', {
        scope: 'base',
        attributes: ['defaultNamingContext', 'dnsHostName', 'highestCommittedUSN', 'supportedControl'],
      });
      const root = searchEntries[0]!;
      expect(root.defaultNamingContext).toBe('DC=corp,DC=example');
      expect(root.dnsHostName).toBe('dc1.corp.example');
      expect(Number(root.highestCommittedUSN)).toBeGreaterThan(0);
      // the paged results control
      expect(root.supportedControl).toContain('1.2.840.113556.1.4.319');
    } finally {
      await client.unbind();
    }
  });

  it('When a client binds over StartTLS on 389, then it is accepted; a simple bind without TLS is refused', async () => {
    const tlsClient = await dc.connect({ startTls: true });
    await tlsClient.unbind();

    const plain = new Client({ url: dc.startTlsUrl });
    await expect(plain.bind(dc.adminDn, dc.adminPassword)).rejects.toBeInstanceOf(StrongAuthRequiredError);
    await plain.unbind();
  });

  it('When a client does not trust the CA, or the certificate is expired, then the TLS handshake fails', async () => {
    const untrusting = new Client({ url: dc.url, connectTimeout: 5000 });
    await expect(untrusting.bind(dc.adminDn, dc.adminPassword)).rejects.toThrow(/self.signed|unable to (verify|get)/i);
    await untrusting.unbind().catch(() => undefined);

    await dc.setCertificate('unknown-ca');
    await expect(dc.connect()).rejects.toThrow(/unable to (verify|get)|self.signed/i);
    await dc.setCertificate('expired');
    await expect(dc.connect()).rejects.toThrow(/expired/i);
    await dc.setCertificate('wrong-name');
    await expect(dc.connect()).rejects.toThrow(/altnames|does not match/i);
    await dc.setCertificate('valid');
    const client = await dc.connect();
    await client.unbind();
  });

  it(
    'When a user is added with unicodePwd over TLS, then it binds; disabled (514) it ' +
      'does not; a weak password is a constraint violation (0000052D)',
    async () => {
      await dc.addEntries([
        adUser({
          cn: 'Ada Lovelace',
          parentDn: dc.usersOu!,
          sAMAccountName: 'ada.lovelace',
          userPrincipalName: 'ada.lovelace@corp.example',
          givenName: 'Ada',
          sn: 'Lovelace',
          mail: 'ada@corp.example',
          department: 'Engineering',
          password: 'Analytical!Engine1843',
        }),
      ]);
      const userDn = `CN=Ada Lovelace,${dc.usersOu}`;
      const asAda = await dc.connect({ bindDn: 'ada.lovelace@corp.example', password: 'Analytical!Engine1843' });
      await asAda.unbind();

      const admin = await dc.connect();
      try {
        await admin.modify(
          userDn,
          new Change({
            operation: 'replace',
            modification: new Attribute({ type: 'userAccountControl', values: ['514'] }),
          }),
        );
        await expect(dc.connect({ bindDn: userDn, password: 'Analytical!Engine1843' })).rejects.toBeInstanceOf(
          InvalidCredentialsError,
        );
        await admin.modify(
          userDn,
          new Change({
            operation: 'replace',
            modification: new Attribute({ type: 'userAccountControl', values: ['512'] }),
          }),
        );

        const weak = admin.modify(
          userDn,
          new Change({
            operation: 'replace',
            modification: new Attribute({ type: 'unicodePwd', values: [unicodePwd('abc')] }),
          }),
        );
        await expect(weak).rejects.toBeInstanceOf(ConstraintViolationError);
        await expect(weak).rejects.toThrow(/0000052D/);
      } finally {
        await admin.unbind();
      }
    },
  );

  it('When an entry changes, then its uSNChanged rises to the rootDSE highestCommittedUSN; objectGUID is 16 bytes in AD string order', async () => {
    const client = await dc.connect();
    try {
      const dn = `CN=Ada Lovelace,${dc.usersOu}`;
      const read = async () =>
        (
          await client.search(dn, {
            scope: 'base',
            attributes: ['uSNChanged', 'objectGUID'],
            explicitBufferAttributes: ['objectGUID'],
          })
        ).searchEntries[0]!;
      const before = await read();
      await client.modify(
        dn,
        new Change({ operation: 'replace', modification: new Attribute({ type: 'title', values: ['Countess'] }) }),
      );
      const after = await read();
      const { searchEntries } = await client.search('', { scope: 'base', attributes: ['highestCommittedUSN'] });
      expect(Number(after.uSNChanged)).toBeGreaterThan(Number(before.uSNChanged));
      expect(Number(after.uSNChanged)).toBe(Number(searchEntries[0]!.highestCommittedUSN));

      const guid = after.objectGUID as Buffer;
      expect(guid).toHaveLength(16);
      const extended = await client.search(dn, { scope: 'base', attributes: ['1.1'] }, new ExtendedDnControl());
      expect(extended.searchEntries[0]!.dn).toContain(`<GUID=${objectGuidToString(guid)}>`);
    } finally {
      await client.unbind();
    }
  });

  it('When the DC is set down, then connections are refused until it is set up again', async () => {
    await dc.setDown(true);
    const client = new Client({ url: dc.url, tlsOptions: { ca: [dc.caCertificatePem] }, connectTimeout: 3000 });
    await expect(client.bind(dc.adminDn, dc.adminPassword)).rejects.toThrow(/ECONNREFUSED|connect/i);
    await dc.setDown(false);
    const again = await dc.connect();
    await again.unbind();
  });
});

describe('Samba AD DCs of another realm, started at once', () => {
  it('When two DCs of realm LAB.EXAMPLE start together, then the realm is provisioned once and each DC has its own namespace and address', async () => {
    const [a, b] = await Promise.all([
      startSambaDc({ realm: 'LAB.EXAMPLE', hostName: 'labdc' }),
      startSambaDc({ realm: 'LAB.EXAMPLE', hostName: 'labdc' }),
    ]);
    try {
      expect(a.netns).not.toBe(b.netns);
      expect(a.host).not.toBe(b.host);
      expect([a.timings.templateMs > 0, b.timings.templateMs > 0].filter(Boolean).length).toBeLessThanOrEqual(1);
      for (const dc of [a, b]) {
        expect(dc.baseDn).toBe('DC=lab,DC=example');
        const client = await dc.connect();
        const { searchEntries } = await client.search('', {
          scope: 'base',
          attributes: ['dnsHostName', 'defaultNamingContext'],
        });
        expect(searchEntries[0]).toMatchObject({
          dnsHostName: 'labdc.lab.example',
          defaultNamingContext: 'DC=lab,DC=example',
        });
        await client.unbind();
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe('Samba AD DC with 3,000 users and 200 groups loaded offline', () => {
  let dc: SambaDc;
  const shape = { baseDn: 'DC=corp,DC=example', mailDomain: 'corp.example', users: 3000, groups: 200 };
  const directory = adDirectory(shape);
  beforeAll(async () => {
    dc = await startSambaDc({ seed: directory.entries });
  });
  afterAll(async () => {
    await dc?.stop();
  });

  it('When a client pages through the users OU, then it reads all 3,000 users and every group with its members', async () => {
    const client = await dc.connect();
    try {
      const users = await client.search(directory.usersOu, {
        scope: 'one',
        filter: '(&(objectClass=user)(objectCategory=person))',
        attributes: ['sAMAccountName', 'manager', 'department', 'userAccountControl'],
        paged: { pageSize: 1000 },
      });
      expect(users.searchEntries).toHaveLength(3000);
      const second = users.searchEntries.find((e) => e.sAMAccountName === 'user0002')!;
      expect(second.manager).toBe(`CN=User 0001,${directory.usersOu}`);
      expect(second.userAccountControl).toBe('512');

      const groups = await client.search(directory.groupsOu, {
        scope: 'one',
        filter: '(objectClass=group)',
        attributes: ['member'],
        paged: { pageSize: 1000 },
      });
      expect(groups.searchEntries).toHaveLength(200);
      expect(groups.searchEntries.every((g) => Array.isArray(g.member) && g.member.length === 15)).toBe(true);
    } finally {
      await client.unbind();
    }
  });

  it('When the query policy is read, then MaxPageSize is 1000; Samba (unlike Windows) still answers larger pages and unpaged searches whole', async () => {
    const client = await dc.connect();
    try {
      const policy = await client.search(
        `CN=Default Query Policy,CN=Query-Policies,CN=Directory Service,CN=Windows NT,CN=Services,CN=Configuration,${dc.baseDn}`,
        {
          scope: 'base',
          attributes: ['lDAPAdminLimits'],
        },
      );
      expect(policy.searchEntries[0]!.lDAPAdminLimits).toContain('MaxPageSize=1000');

      const pages: number[] = [];
      for await (const page of client.searchPaginated(directory.usersOu, {
        scope: 'one',
        filter: '(objectClass=user)',
        attributes: ['1.1'],
        paged: { pageSize: 2500 },
      })) {
        pages.push(page.searchEntries.length);
      }
      expect(pages).toEqual([2500, 500]);
      const unpaged = await client.search(directory.usersOu, {
        scope: 'one',
        filter: '(objectClass=user)',
        attributes: ['1.1'],
      });
      expect(unpaged.searchEntries).toHaveLength(3000);
    } finally {
      await client.unbind();
    }
  });

  it('When entries are bulk-loaded into a running DC, then they are there after its restart', async () => {
    await dc.bulkLoad([
      adUser({ cn: 'Late Joiner', parentDn: directory.usersOu, sAMAccountName: 'late.joiner', enabled: false }),
    ]);
    const client = await dc.connect();
    try {
      const { searchEntries } = await client.search(directory.usersOu, {
        scope: 'one',
        filter: '(sAMAccountName=late.joiner)',
        attributes: ['userAccountControl'],
      });
      expect(searchEntries[0]?.userAccountControl).toBe('514');
    } finally {
      await client.unbind();
    }
  });

  it('When the DC stops, then its process, namespace and files are gone', async () => {
    const log = execFileSync('ip', ['netns', 'pids', dc.netns], { encoding: 'utf8' }).trim().split('\n').map(Number);
    expect(log.length).toBeGreaterThan(0);
    await dc.stop();
    expect(netnsExists(dc.netns)).toBe(false);
    expect(log.some(processAlive)).toBe(false);
    expect(existsSync(dc.dir)).toBe(false);
  });
});
