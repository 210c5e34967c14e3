import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { run } from './internal/process';

/**
 * Which certificate a server presents, for the tests of a client's certificate checks:
 * - `valid`: issued for the server's names by the CA handed to the test;
 * - `unknown-ca`: the same names, issued by another CA the test never sees;
 * - `expired`: issued by the test's CA, valid for a month in 2020;
 * - `wrong-name`: issued by the test's CA for another host name.
 */
export type CertificateKind = 'valid' | 'unknown-ca' | 'expired' | 'wrong-name';

export interface IssuedCertificate {
  certPath: string;
  keyPath: string;
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthority {
  /** The CA certificate (PEM) a client is given to trust. */
  certPem: string;
  certPath: string;
  /** A server certificate for `names` (DNS names and IP addresses) of the given kind. */
  issue(names: readonly string[], kind?: CertificateKind): Promise<IssuedCertificate>;
}

const CA_CONFIG = `[ca]
default_ca = peers
[peers]
database = index.txt
new_certs_dir = issued
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
rand_serial = yes
[any]
commonName = supplied
`;

/** A CA in `dir` (created), made with the openssl command line; keys are EC P-256 (instant to make). */
export async function createCertificateAuthority(
  dir: string,
  name = 'msp peers test CA',
): Promise<CertificateAuthority> {
  const trusted = await makeCa(join(dir, 'ca'), name);
  let unknown: Promise<CaFiles> | undefined;
  let serial = 0;
  // `openssl ca` keeps a database file per CA: issue one certificate at a time.
  let queue: Promise<unknown> = Promise.resolve();

  return {
    certPem: readFileSync(trusted.certPath, 'utf8'),
    certPath: trusted.certPath,
    issue(names, kind = 'valid') {
      const task = queue.then(async () => {
        const ca =
          kind === 'unknown-ca'
            ? await (unknown ??= makeCa(join(dir, 'unknown-ca'), `${name} (not trusted)`))
            : trusted;
        const subjectNames = kind === 'wrong-name' ? ['wrong-name.invalid'] : names;
        return issueFrom(ca, join(dir, `server-${++serial}-${kind}`), subjectNames, kind === 'expired');
      });
      queue = task.catch(() => undefined);
      return task;
    },
  };
}

interface CaFiles {
  dir: string;
  certPath: string;
  keyPath: string;
}

async function makeCa(dir: string, commonName: string): Promise<CaFiles> {
  mkdirSync(join(dir, 'issued'), { recursive: true });
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'openssl.cnf'), CA_CONFIG);
  const keyPath = join(dir, 'ca.key');
  const certPath = join(dir, 'ca.pem');
  await run('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', keyPath]);
  await run('openssl', [
    'req',
    '-x509',
    '-new',
    '-key',
    keyPath,
    '-out',
    certPath,
    '-days',
    '3650',
    '-sha256',
    '-subj',
    `/CN=${commonName} ${randomBytes(4).toString('hex')}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  chmodSync(keyPath, 0o600);
  return { dir, certPath, keyPath };
}

async function issueFrom(
  ca: CaFiles,
  dir: string,
  names: readonly string[],
  expired: boolean,
): Promise<IssuedCertificate> {
  mkdirSync(dir, { recursive: true });
  const keyPath = join(dir, 'server.key');
  const csrPath = join(dir, 'server.csr');
  const certPath = join(dir, 'server.pem');
  const extPath = join(dir, 'ext.cnf');
  const san = names.map((n) => (isIP(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
  writeFileSync(
    extPath,
    `subjectAltName=${san}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment,keyAgreement\nextendedKeyUsage=serverAuth\n`,
  );
  await run('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', keyPath]);
  await run('openssl', ['req', '-new', '-key', keyPath, '-out', csrPath, '-subj', `/CN=${names[0] ?? 'localhost'}`]);
  const now = Date.now();
  const [start, end] = expired
    ? ['20200101000000Z', '20200201000000Z']
    : [generalizedTime(now - 24 * 3600_000), generalizedTime(now + 90 * 24 * 3600_000)];
  await run(
    'openssl',
    [
      'ca',
      '-batch',
      '-notext',
      '-config',
      'openssl.cnf',
      '-cert',
      ca.certPath,
      '-keyfile',
      ca.keyPath,
      '-in',
      csrPath,
      '-out',
      certPath,
      '-startdate',
      start,
      '-enddate',
      end,
      '-extfile',
      extPath,
    ],
    { cwd: ca.dir },
  );
  // Servers (Samba, slapd) refuse private keys others can read.
  chmodSync(keyPath, 0o600);
  return { certPath, keyPath, certPem: readFileSync(certPath, 'utf8'), keyPem: readFileSync(keyPath, 'utf8') };
}

function generalizedTime(ms: number): string {
  return `${new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}
