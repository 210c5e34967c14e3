import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'ldapts';
import { makeInstanceDir, removeInstanceDir } from './internal/paths';
import { freePort, type PeerProcess, run, spawnPeer, waitForPorts } from './internal/process';
import { type LdapEntry, toLdaptsAttributes, toLdif } from './ldif';
import { type CertificateKind, createCertificateAuthority } from './tls';

const START_TIMEOUT_MS = 20_000;
const PORT_ATTEMPTS = 3;

export interface SlapdOptions {
  /** Suffix of the one mdb database (default `dc=example,dc=org`). */
  baseDn?: string;
  /** Password of the root DN `cn=admin,<baseDn>` (default `admin-secret`). */
  adminPassword?: string;
  /** The certificate presented on the ldaps port and after StartTLS (default `valid`). */
  certificate?: CertificateKind;
  /** Entries added over LDAP right after the start, parents first (thousands take about a second). */
  seed?: readonly LdapEntry[];
}

export interface Slapd {
  /** `ldap://127.0.0.1:<port>` (plain; StartTLS available). */
  url: string;
  /** `ldaps://127.0.0.1:<port>`. */
  ldapsUrl: string;
  host: string;
  port: number;
  ldapsPort: number;
  baseDn: string;
  /** The root DN (not subject to size limits or access rules). */
  adminDn: string;
  adminPassword: string;
  caCertificatePem: string;
  /** `ou=people,<baseDn>` and `ou=groups,<baseDn>`, created at the start. */
  peopleOu: string;
  groupsOu: string;
  dir: string;
  /** A client bound as the root DN (or the given account); over LDAPS unless `startTls` or `plain`. The caller unbinds it. */
  connect(options?: { bindDn?: string; password?: string; startTls?: boolean; plain?: boolean }): Promise<Client>;
  /** Adds entries over LDAP, in order (overlays such as memberof see them). */
  addEntries(entries: readonly LdapEntry[]): Promise<void>;
  /** Restarts slapd presenting another kind of certificate. */
  setCertificate(kind: CertificateKind): Promise<void>;
  /** `true` stops slapd (connections refused), `false` starts it again on the same ports. */
  setDown(down: boolean): Promise<void>;
  stop(): Promise<void>;
}

function slapdConf(
  dir: string,
  baseDn: string,
  adminPassword: string,
  tls: { certPath: string; keyPath: string; caPath: string },
): string {
  return `# Throw-away slapd for tests: one mdb database, TLS, the memberof overlay.
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
pidfile ${dir}/slapd.pid
argsfile ${dir}/slapd.args
TLSCACertificateFile ${tls.caPath}
TLSCertificateFile ${tls.certPath}
TLSCertificateKeyFile ${tls.keyPath}

database mdb
maxsize 1073741824
suffix "${baseDn}"
rootdn "cn=admin,${baseDn}"
rootpw ${adminPassword}
directory ${dir}/db
# No fsync per write: a test directory need not survive a power cut, and adds get much faster.
dbnosync
index objectClass eq
index uid,mail,cn eq
index entryUUID eq
index modifyTimestamp eq
index member eq
overlay memberof
memberof-refint true
`;
}

function rdn(dn: string): string {
  const first = dn.split(',')[0] ?? '';
  return first.slice(first.indexOf('=') + 1);
}

/**
 * Starts a throw-away OpenLDAP server on free ports of 127.0.0.1. Loopback, not a namespace:
 * slapd listens wherever it is told, so it needs no ports of its own, no root and no network
 * setup, and a directory connector under test reaches it through its loopback allowance.
 */
export async function startSlapd(options: SlapdOptions = {}): Promise<Slapd> {
  const baseDn = options.baseDn ?? 'dc=example,dc=org';
  const adminPassword = options.adminPassword ?? 'admin-secret';
  const adminDn = `cn=admin,${baseDn}`;
  const host = '127.0.0.1';
  const dir = makeInstanceDir('slapd');
  let proc: PeerProcess | undefined;
  try {
    const ca = await createCertificateAuthority(join(dir, 'tls'), 'slapd test CA');
    const config = join(dir, 'slapd.conf');
    const writeConfig = async (kind: CertificateKind) => {
      const cert = await ca.issue(['localhost', host], kind);
      const caPath = kind === 'unknown-ca' ? join(dir, 'tls', 'unknown-ca', 'ca.pem') : ca.certPath;
      writeFileSync(config, slapdConf(dir, baseDn, adminPassword, { ...cert, caPath }));
    };
    await writeConfig(options.certificate ?? 'valid');
    mkdirSync(join(dir, 'db'));

    const peopleOu = `ou=people,${baseDn}`;
    const groupsOu = `ou=groups,${baseDn}`;
    const firstRdn = baseDn.split(',')[0] ?? '';
    const base: LdapEntry[] = [
      {
        dn: baseDn,
        attributes: firstRdn.toLowerCase().startsWith('dc=')
          ? { objectClass: ['top', 'dcObject', 'organization'], dc: rdn(baseDn), o: rdn(baseDn) }
          : { objectClass: ['top', 'organization'], o: rdn(baseDn) },
      },
      { dn: peopleOu, attributes: { objectClass: ['top', 'organizationalUnit'], ou: 'people' } },
      { dn: groupsOu, attributes: { objectClass: ['top', 'organizationalUnit'], ou: 'groups' } },
    ];
    const ldifPath = join(dir, 'seed.ldif');
    writeFileSync(ldifPath, toLdif(base));
    // slapadd writes the operational attributes (entryUUID, timestamps) as an add would.
    await run('slapadd', ['-q', '-f', config, '-l', ldifPath], { timeoutMs: 300_000 });

    let ports: [number, number] = [0, 0];
    const startProcess = async (reusePorts: boolean) => {
      for (let attempt = 1; ; attempt++) {
        if (!reusePorts) ports = [await freePort(host), await freePort(host)];
        const p = spawnPeer(
          'slapd',
          ['-d', '0', '-f', config, '-h', `ldap://${host}:${ports[0]}/ ldaps://${host}:${ports[1]}/`],
          {
            logPath: join(dir, 'slapd.out'),
            instanceDir: dir,
          },
        );
        try {
          await waitForPorts(p, host, ports, START_TIMEOUT_MS, 'slapd');
          return p;
        } catch (error) {
          // Most likely a port taken between choosing and binding it: try others.
          if (reusePorts || attempt >= PORT_ATTEMPTS) throw error;
        }
      }
    };
    proc = await startProcess(false);
    const [port, ldapsPort] = ports;
    const url = `ldap://${host}:${port}`;
    const ldapsUrl = `ldaps://${host}:${ldapsPort}`;
    const caCertificatePem = ca.certPem;

    const connect: Slapd['connect'] = async (o = {}) => {
      const client = new Client({
        url: o.startTls || o.plain ? url : ldapsUrl,
        ...(o.startTls || o.plain ? {} : { tlsOptions: { ca: [caCertificatePem] } }),
        connectTimeout: 10_000,
        timeout: 120_000,
      });
      try {
        if (o.startTls) await client.startTLS({ ca: [caCertificatePem], host });
        await client.bind(o.bindDn ?? adminDn, o.password ?? adminPassword);
      } catch (error) {
        await client.unbind().catch(() => undefined);
        throw error;
      }
      return client;
    };

    const addEntries = async (entries: readonly LdapEntry[]) => {
      const client = await connect();
      try {
        for (const entry of entries) await client.add(entry.dn, toLdaptsAttributes(entry));
      } finally {
        await client.unbind().catch(() => undefined);
      }
    };
    // Over LDAP rather than slapadd: overlays (memberof) only act on LDAP operations.
    if (options.seed?.length) await addEntries(options.seed);

    let stopped = false;
    return {
      url,
      ldapsUrl,
      host,
      port,
      ldapsPort,
      baseDn,
      adminDn,
      adminPassword,
      caCertificatePem,
      peopleOu,
      groupsOu,
      dir,
      connect,
      addEntries,
      async setCertificate(kind) {
        await proc?.stop();
        await writeConfig(kind);
        proc = await startProcess(true);
      },
      async setDown(down) {
        if (down && proc) {
          await proc.stop();
          proc = undefined;
        } else if (!down && !proc) {
          proc = await startProcess(true);
        }
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await proc?.stop();
        if (!process.env.MSP_PEERS_KEEP) removeInstanceDir(dir);
      },
    };
  } catch (error) {
    await proc?.stop().catch(() => undefined);
    removeInstanceDir(dir);
    throw error;
  }
}
