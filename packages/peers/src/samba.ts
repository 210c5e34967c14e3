import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'ldapts';
import { acquireLock } from './internal/lock';
import { makeInstanceDir, peersRoot, removeInstanceDir } from './internal/paths';
import { type PeerProcess, run, spawnPeer, waitForPorts } from './internal/process';
import { type LdapEntry, organizationalUnit, toLdaptsAttributes, toLdif } from './ldif';
import { createNetworkNamespace, type NetworkNamespace } from './netns';
import { type CertificateAuthority, type CertificateKind, createCertificateAuthority } from './tls';

/** Bumped when the way a template is made changes, so caches from older code are not reused. */
const TEMPLATE_FORMAT = 1;
const PROVISION_TIMEOUT_MS = 300_000;
const START_TIMEOUT_MS = 60_000;
/** Recorded in the template's DNS records; every copy runs at another address (see README). */
const TEMPLATE_HOST_IP = '10.231.255.254';

export interface SambaDcOptions {
  /** Kerberos realm (default `CORP.EXAMPLE`); the base DN follows from it (`DC=corp,DC=example`). */
  realm?: string;
  /** NetBIOS domain name (default: the realm's first label, upper case). */
  domain?: string;
  /** The DC's host name (default `dc1`). */
  hostName?: string;
  /** Administrator's password (default `Adm1n!Passw0rd`); must meet AD's complexity rules. */
  adminPassword?: string;
  /** The certificate the DC presents on 636 and after StartTLS (default `valid`). */
  certificate?: CertificateKind;
  /**
   * Entries loaded into the directory before it starts, offline (ldbadd on the copy; thousands
   * in seconds). The loaded directory is cached like the template, keyed by the entries, so
   * suites asking for the same entries pay for the load once per machine.
   */
  seed?: readonly LdapEntry[];
  /** An OU created (over LDAP) after the start and returned as `usersOu`, e.g. `OU=Staff`. */
  usersOu?: string;
  /**
   * Samba's default refuses simple binds without TLS (`ldap server require strong auth = yes`),
   * as AD does when hardened. `true` lets plain `ldap://` binds through.
   */
  allowPlainBind?: boolean;
  /**
   * `single` (default) serves everything from one process, which starts fastest; `prefork` is
   * Samba's production model (several processes per service).
   */
  processModel?: 'single' | 'prefork';
}

export interface SambaDc {
  /** `ldaps://<address>` (port 636). */
  url: string;
  /** `ldap://<address>` (port 389), for StartTLS. */
  startTlsUrl: string;
  /** The DC's address inside its network namespace, reachable from the test process. */
  host: string;
  /** The DC's DNS name (`dc1.corp.example`), also in its certificate. */
  hostName: string;
  baseDn: string;
  realm: string;
  /** NetBIOS domain (`CORP`). */
  domain: string;
  /** DNS domain (`corp.example`), the default UPN suffix. */
  dnsDomain: string;
  adminDn: string;
  adminPassword: string;
  /** The CA a client must trust for `url`/StartTLS (for `unknown-ca`, the CA that did NOT sign). */
  caCertificatePem: string;
  /** The OU asked for with `options.usersOu`, as a full DN. */
  usersOu?: string;
  /** The network namespace's name. */
  netns: string;
  /** The range every DC address comes from (for an outbound allow-list such as OUTBOUND_ALLOWED_NETWORKS). */
  subnet: string;
  /** Where this DC's files are. */
  dir: string;
  /** How long the parts of this start took, in ms (`templateMs` is 0 when the template was cached). */
  timings: { templateMs: number; copyMs: number; startMs: number; totalMs: number };
  /** A client bound as Administrator (or the given account) over LDAPS; the caller unbinds it. */
  connect(options?: { bindDn?: string; password?: string; startTls?: boolean }): Promise<Client>;
  /** Adds entries over LDAPS, in order (passwords need TLS: this is it). */
  addEntries(entries: readonly LdapEntry[]): Promise<void>;
  /** Stops the DC, loads the entries offline (ldbadd), starts it again: for thousands of entries. */
  bulkLoad(entries: readonly LdapEntry[]): Promise<void>;
  /** Restarts the DC presenting another kind of certificate. */
  setCertificate(kind: CertificateKind): Promise<void>;
  /** `true` stops the samba process (connections are refused), `false` starts it again. */
  setDown(down: boolean): Promise<void>;
  /** Stops the DC, deletes its namespace and its files. */
  stop(): Promise<void>;
}

interface Names {
  realm: string;
  domain: string;
  dnsDomain: string;
  hostName: string;
  fqdn: string;
  baseDn: string;
  adminPassword: string;
}

function namesOf(options: SambaDcOptions): Names {
  const realm = (options.realm ?? 'CORP.EXAMPLE').toUpperCase();
  const dnsDomain = realm.toLowerCase();
  const hostName = (options.hostName ?? 'dc1').toLowerCase();
  return {
    realm,
    domain: (options.domain ?? realm.split('.')[0]!).toUpperCase(),
    dnsDomain,
    hostName,
    fqdn: `${hostName}.${dnsDomain}`,
    baseDn: dnsDomain
      .split('.')
      .map((label) => `DC=${label}`)
      .join(','),
    adminPassword: options.adminPassword ?? 'Adm1n!Passw0rd',
  };
}

let sambaVersionCache: Promise<string> | undefined;
function sambaVersion(): Promise<string> {
  sambaVersionCache ??= run('samba', ['-V']).then((out) => out.trim());
  return sambaVersionCache;
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/**
 * Runs `build` into a temporary directory and renames it to `dir`, once per machine: the
 * rename makes a finished template appear atomically, the lock keeps parallel workers from
 * building the same one twice, and a lock left by a dead process is taken over.
 */
async function cached(dir: string, build: (into: string) => Promise<void>): Promise<boolean> {
  if (existsSync(join(dir, '.ready'))) return false;
  const release = await acquireLock(`${dir}.lock`, PROVISION_TIMEOUT_MS + 30_000);
  try {
    if (existsSync(join(dir, '.ready'))) return false;
    rmSync(dir, { recursive: true, force: true });
    const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await build(tmp);
      writeFileSync(join(tmp, '.ready'), new Date().toISOString());
      renameSync(tmp, dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return true;
  } finally {
    release();
  }
}

export interface SambaTemplate {
  dir: string;
  /** Seconds the provision took when the template was made (possibly by an earlier run). */
  provisionSeconds: number;
  /** Whether this call made it (false: it came from the cache). */
  created: boolean;
}

/**
 * The provisioned domain for these names, made once per machine (cached under the peers
 * directory, keyed by Samba's version and the names) with `samba-tool domain provision`.
 */
export async function ensureSambaTemplate(options: SambaDcOptions = {}): Promise<SambaTemplate> {
  const names = namesOf(options);
  const version = await sambaVersion();
  const key = hash({ TEMPLATE_FORMAT, version, ...names });
  const dir = join(peersRoot(), `samba-template-${key}`);
  const created = await cached(dir, async (into) => {
    const started = Date.now();
    mkdirSync(into, { recursive: true });
    await run(
      'samba-tool',
      [
        'domain',
        'provision',
        `--targetdir=${into}`,
        `--realm=${names.realm}`,
        `--domain=${names.domain}`,
        `--host-name=${names.hostName}`,
        `--host-ip=${TEMPLATE_HOST_IP}`,
        '--server-role=dc',
        '--dns-backend=SAMBA_INTERNAL',
        '--use-rfc2307',
        `--adminpass=${names.adminPassword}`,
      ],
      { timeoutMs: PROVISION_TIMEOUT_MS },
    );
    // Provision's own smb.conf names the temporary directory; each copy writes its own.
    rmSync(join(into, 'etc', 'smb.conf'), { force: true });
    writeFileSync(
      join(into, 'provision.json'),
      JSON.stringify({ version, seconds: (Date.now() - started) / 1000, names }),
    );
  });
  const info = JSON.parse(readFileSync(join(dir, 'provision.json'), 'utf8')) as { seconds: number };
  return { dir, provisionSeconds: info.seconds, created };
}

async function ensureSeededTemplate(base: SambaTemplate, names: Names, seed: readonly LdapEntry[]): Promise<string> {
  const ldif = toLdif(seed);
  const dir = `${base.dir}-seed-${hash(ldif)}`;
  await cached(dir, async (into) => {
    await copyTree(base.dir, into);
    const config = join(into, 'etc', 'smb.conf');
    writeFileSync(config, smbConf(into, names, undefined, { allowPlainBind: false, processModel: 'single' }));
    await loadOffline(into, config, ldif);
    rmSync(config, { force: true });
  });
  return dir;
}

async function copyTree(from: string, to: string): Promise<void> {
  // cp keeps the sysvol's extended attributes (its NT ACLs) that Node's copy would drop.
  await run('cp', ['-a', '--reflink=auto', from, to]);
}

/** ldbadd through Samba's own modules, in one batch-mode transaction (see README: seconds, not minutes). */
async function loadOffline(dcDir: string, config: string, ldif: string): Promise<void> {
  const file = join(dcDir, `load-${randomBytes(4).toString('hex')}.ldif`);
  writeFileSync(file, ldif);
  try {
    await run(
      'ldbadd',
      [`--configfile=${config}`, '--nosync', '-o', 'batch_mode:1', '-H', join(dcDir, 'private', 'sam.ldb'), file],
      {
        timeoutMs: 600_000,
      },
    );
  } finally {
    rmSync(file, { force: true });
  }
}

interface Tls {
  keyPath: string;
  certPath: string;
  caPath: string;
}

function smbConf(
  dcDir: string,
  names: Names,
  tls: Tls | undefined,
  options: Required<Pick<SambaDcOptions, 'allowPlainBind' | 'processModel'>>,
): string {
  const lines = [
    '[global]',
    `netbios name = ${names.hostName.toUpperCase()}`,
    `realm = ${names.realm}`,
    `workgroup = ${names.domain}`,
    'server role = active directory domain controller',
    // Only the directory's own services: no file server (s3fs), winbindd or NetBIOS, which a
    // test of LDAP, Kerberos or DNS does not need and which would only slow the start.
    'server services = ldap, cldap, kdc, dns',
    'idmap_ldb:use rfc2307 = yes',
    `private dir = ${dcDir}/private`,
    `binddns dir = ${dcDir}/bind-dns`,
    `lock directory = ${dcDir}`,
    `state directory = ${dcDir}/state`,
    `cache directory = ${dcDir}/cache`,
    `pid directory = ${dcDir}/run`,
    `ncalrpc dir = ${dcDir}/run/ncalrpc`,
    `winbindd socket directory = ${dcDir}/run/winbindd`,
    `ntp signd socket directory = ${dcDir}/run/ntp_signd`,
    `log file = ${dcDir}/log/samba.log`,
    'log level = 1',
    `ldap server require strong auth = ${options.allowPlainBind ? 'no' : 'yes'}`,
  ];
  if (tls) {
    lines.push(
      'tls enabled = yes',
      `tls keyfile = ${tls.keyPath}`,
      `tls certfile = ${tls.certPath}`,
      `tls cafile = ${tls.caPath}`,
    );
  }
  lines.push(
    '',
    '[sysvol]',
    `path = ${dcDir}/state/sysvol`,
    'read only = No',
    '',
    '[netlogon]',
    `path = ${dcDir}/state/sysvol/${names.dnsDomain}/scripts`,
    'read only = No',
    '',
  );
  return lines.map((l) => (l.startsWith('[') || l === '' ? l : `\t${l}`)).join('\n');
}

/**
 * Starts a Samba Active Directory domain controller in a network namespace of its own, from a
 * copy of the cached provisioned template, with a certificate from a CA made for it.
 */
export async function startSambaDc(options: SambaDcOptions = {}): Promise<SambaDc> {
  const began = Date.now();
  const names = namesOf(options);
  const settings = {
    allowPlainBind: options.allowPlainBind ?? false,
    processModel: options.processModel ?? 'single',
  } as const;
  const dir = makeInstanceDir('samba');
  let netns: NetworkNamespace | undefined;
  let proc: PeerProcess | undefined;
  try {
    const template = await ensureSambaTemplate(options);
    const templateMs = template.created ? Date.now() - began : 0;
    const ns = await createNetworkNamespace();
    netns = ns;
    const source = options.seed?.length ? await ensureSeededTemplate(template, names, options.seed) : template.dir;

    const copyStarted = Date.now();
    const dcDir = join(dir, 'dc');
    const ca = await createCertificateAuthority(join(dir, 'tls'), `${names.realm} test CA`);
    await copyTree(source, dcDir);
    for (const sub of ['run', 'log', 'cache']) mkdirSync(join(dcDir, sub), { recursive: true });
    const copyMs = Date.now() - copyStarted;

    const startStarted = Date.now();
    const config = join(dcDir, 'etc', 'smb.conf');
    const address = ns.address;
    const writeConfig = async (kind: CertificateKind) => {
      const cert = await ca.issue([names.fqdn, address], kind);
      const caPath = kind === 'unknown-ca' ? join(dir, 'tls', 'unknown-ca', 'ca.pem') : ca.certPath;
      writeFileSync(
        config,
        smbConf(dcDir, names, { keyPath: cert.keyPath, certPath: cert.certPath, caPath }, settings),
      );
    };
    await writeConfig(options.certificate ?? 'valid');

    const startProcess = async () => {
      const p = spawnPeer(
        'samba',
        ['-F', '--no-process-group', '--debug-stdout', '-M', settings.processModel, '-s', config],
        {
          logPath: join(dir, 'samba.out'),
          instanceDir: dir,
          prefix: ['ip', 'netns', 'exec', ns.name],
        },
      );
      await waitForPorts(p, address, [389, 636], START_TIMEOUT_MS, 'samba');
      return p;
    };
    proc = await startProcess();
    const startMs = Date.now() - startStarted;

    const adminDn = `CN=Administrator,CN=Users,${names.baseDn}`;
    const caCertificatePem = ca.certPem;
    const url = `ldaps://${address}`;
    const startTlsUrl = `ldap://${address}`;
    const connect = async (o: { bindDn?: string; password?: string; startTls?: boolean } = {}) => {
      // ldapts speaks TLS from the first byte whenever tlsOptions are given, even to an ldap://
      // URL: a StartTLS client must not have them.
      const client = new Client({
        url: o.startTls ? startTlsUrl : url,
        ...(o.startTls ? {} : { tlsOptions: { ca: [caCertificatePem] } }),
        connectTimeout: 10_000,
        timeout: 120_000,
      });
      try {
        // Node checks the certificate against `host`; without it, against 'localhost'.
        if (o.startTls) await client.startTLS({ ca: [caCertificatePem], host: address });
        await client.bind(o.bindDn ?? adminDn, o.password ?? names.adminPassword);
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

    let usersOu: string | undefined;
    if (options.usersOu) {
      usersOu = `${options.usersOu},${names.baseDn}`;
      await addEntries([organizationalUnit(usersOu)]);
    }

    let stopped = false;
    const dc: SambaDc = {
      url,
      startTlsUrl,
      host: address,
      hostName: names.fqdn,
      baseDn: names.baseDn,
      realm: names.realm,
      domain: names.domain,
      dnsDomain: names.dnsDomain,
      adminDn,
      adminPassword: names.adminPassword,
      caCertificatePem,
      usersOu,
      netns: ns.name,
      subnet: '10.231.0.0/16',
      dir,
      timings: { templateMs, copyMs, startMs, totalMs: Date.now() - began },
      connect,
      addEntries,
      async bulkLoad(entries) {
        await proc?.stop();
        proc = undefined;
        await loadOffline(dcDir, config, toLdif(entries));
        proc = await startProcess();
      },
      async setCertificate(kind) {
        await proc?.stop();
        proc = undefined;
        await writeConfig(kind);
        proc = await startProcess();
      },
      async setDown(down) {
        if (down && proc) {
          await proc.stop();
          proc = undefined;
        } else if (!down && !proc) {
          proc = await startProcess();
        }
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await proc?.stop();
        await ns.destroy();
        if (!process.env.MSP_PEERS_KEEP) removeInstanceDir(dir);
      },
    };
    return dc;
  } catch (error) {
    await proc?.stop().catch(() => undefined);
    await netns?.destroy().catch(() => undefined);
    removeInstanceDir(dir);
    throw error;
  }
}

export type { CertificateAuthority };
