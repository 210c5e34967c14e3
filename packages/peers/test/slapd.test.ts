import { existsSync } from 'node:fs';
import { Attribute, Change, Client, InvalidCredentialsError } from 'ldapts';
import { canConnect } from '../src/internal/process';
import { groupOfNames, inetOrgPerson, openLdapDirectory, startSlapd, type Slapd } from '../src';

jest.setTimeout(60_000);

describe('slapd', () => {
  let slapd: Slapd;
  const directory = openLdapDirectory({
    baseDn: 'dc=example,dc=org',
    mailDomain: 'example.org',
    users: 1200,
    groups: 10,
    usersOu: 'ou=staff',
    groupsOu: 'ou=teams',
  });
  beforeAll(async () => {
    slapd = await startSlapd({ seed: directory.entries });
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it('When a client binds over LDAPS, StartTLS or plain LDAP, then the root DN reads the suffix', async () => {
    for (const how of [{}, { startTls: true }, { plain: true }]) {
      const client = await slapd.connect(how);
      const { searchEntries } = await client.search(slapd.baseDn, { scope: 'base' });
      expect(searchEntries[0]?.dn).toBe('dc=example,dc=org');
      await client.unbind();
    }
    const wrong = slapd.connect({ password: 'wrong' });
    await expect(wrong).rejects.toBeInstanceOf(InvalidCredentialsError);
  });

  it('When entries are read, then entryUUID and modifyTimestamp are there, and a change moves modifyTimestamp', async () => {
    await slapd.addEntries([
      inetOrgPerson({
        uid: 'ada',
        parentDn: slapd.peopleOu,
        cn: 'Ada Lovelace',
        sn: 'Lovelace',
        mail: 'ada@example.org',
        password: 'ada-secret',
      }),
      groupOfNames({ cn: 'vpn', parentDn: slapd.groupsOu, members: [`uid=ada,${slapd.peopleOu}`] }),
    ]);
    const client = await slapd.connect();
    try {
      const dn = `uid=ada,${slapd.peopleOu}`;
      const read = async () =>
        (await client.search(dn, { scope: 'base', attributes: ['entryUUID', 'modifyTimestamp', 'memberOf'] }))
          .searchEntries[0]!;
      const before = await read();
      expect(before.entryUUID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(before.memberOf).toBe(`cn=vpn,${slapd.groupsOu}`);
      // modifyTimestamp has one-second resolution
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await client.modify(
        dn,
        new Change({ operation: 'replace', modification: new Attribute({ type: 'title', values: ['Countess'] }) }),
      );
      const after = await read();
      expect(after.entryUUID).toBe(before.entryUUID);
      expect(String(after.modifyTimestamp) > String(before.modifyTimestamp)).toBe(true);
      const since = await client.search(slapd.baseDn, {
        filter: `(modifyTimestamp>=${String(after.modifyTimestamp)})`,
        attributes: ['1.1'],
      });
      expect(since.searchEntries.map((e) => e.dn)).toContain(dn);

      const asAda = await slapd.connect({ bindDn: dn, password: 'ada-secret' });
      await asAda.unbind();
    } finally {
      await client.unbind();
    }
  });

  it('When a client pages through 1,200 users, then it reads them all', async () => {
    const client = await slapd.connect();
    try {
      const { searchEntries } = await client.search(directory.usersOu, {
        scope: 'one',
        filter: '(objectClass=inetOrgPerson)',
        attributes: ['uid'],
        paged: { pageSize: 500 },
      });
      expect(searchEntries).toHaveLength(1200);
    } finally {
      await client.unbind();
    }
  });

  it('When the certificate is expired or from an unknown CA, then the TLS handshake fails', async () => {
    await slapd.setCertificate('expired');
    await expect(slapd.connect()).rejects.toThrow(/expired/i);
    await slapd.setCertificate('unknown-ca');
    await expect(slapd.connect()).rejects.toThrow(/unable to (verify|get)|self.signed/i);
    await slapd.setCertificate('valid');
    const client = await slapd.connect();
    await client.unbind();
  });

  it('When slapd is set down and up, then it refuses and then serves on the same ports', async () => {
    await slapd.setDown(true);
    const client = new Client({ url: slapd.url, connectTimeout: 2000 });
    await expect(client.bind(slapd.adminDn, slapd.adminPassword)).rejects.toThrow(/ECONNREFUSED|connect/i);
    await slapd.setDown(false);
    const again = await slapd.connect();
    await again.unbind();
  });

  it('When slapd stops, then its ports close and its files are gone', async () => {
    const other = await startSlapd();
    await other.stop();
    expect(await canConnect(other.host, other.port)).toBe(false);
    expect(await canConnect(other.host, other.ldapsPort)).toBe(false);
    expect(existsSync(other.dir)).toBe(false);
  });
});
