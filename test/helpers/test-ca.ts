import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A key and certificate in PEM, as tls.createServer takes them. */
export type KeyPair = { key: string; cert: string };

/** What {@link TestCa.issue} puts in a server certificate. */
export type IssueOptions = {
  commonName: string;
  organization?: string;
  /** `DNS:localhost`, `IP:127.0.0.1`, … Default: localhost, 127.0.0.1 and ::1. */
  altNames?: string[];
  /** Default: one day ago. */
  notBefore?: Date;
  /** Default: 90 days from now. */
  notAfter?: Date;
  /** extendedKeyUsage: `serverAuth` (default) or `clientAuth` for an mTLS client certificate. */
  extendedKeyUsage?: 'serverAuth' | 'clientAuth';
};

/** A certificate authority made at test time with the openssl CLI (EC P-256 keys: fast to make). */
export type TestCa = {
  /** The CA certificate (PEM): trust it to verify what it issued. */
  caCert: string;
  /** The working directory (removed by destroy); tests may write files there. */
  dir: string;
  /** Issues a certificate signed by the CA (a server's unless extendedKeyUsage says clientAuth). */
  issue(options: IssueOptions): KeyPair;
  /** Removes the working directory. Idempotent. */
  destroy(): void;
};

/** openssl's time format for `ca -startdate/-enddate`: YYYYMMDDHHMMSSZ. */
function opensslTime(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

const CA_CONFIG = `
[ ca ]
default_ca = test_ca
[ test_ca ]
dir = DIR
database = $dir/index.txt
new_certs_dir = $dir
serial = $dir/serial
default_md = sha256
policy = policy_any
copy_extensions = none
unique_subject = no
[ policy_any ]
commonName = supplied
organizationName = optional
`;

/**
 * Creates a test CA in a temporary directory. Needs the `openssl` CLI (Debian: `openssl`).
 * `openssl ca` is used for server certificates because it can backdate them, which makes
 * expired certificates possible without faking the clock.
 */
export function createTestCa(name = 'Outpost Test CA'): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-ca-'));
  const run = (args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(join(dir, 'ca.cnf'), CA_CONFIG.replace('DIR', dir));
  run([
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '3650',
    '-subj',
    `/CN=${name}/O=Outpost Tests`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  let issued = 0;
  return {
    caCert: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    dir,
    issue(options) {
      const id = `server-${issued++}`;
      const altNames = options.altNames ?? ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1'];
      const subject = `/CN=${options.commonName}${options.organization ? `/O=${options.organization}` : ''}`;
      run(['req', '-new', ...ecKey, '-keyout', `${id}.key`, '-out', `${id}.csr`, '-subj', subject]);
      writeFileSync(
        join(dir, `${id}.ext`),
        `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=${options.extendedKeyUsage ?? 'serverAuth'}\nsubjectAltName=${altNames.join(',')}\n`,
      );
      const notBefore = options.notBefore ?? new Date(Date.now() - 86_400_000);
      const notAfter = options.notAfter ?? new Date(Date.now() + 90 * 86_400_000);
      run([
        'ca',
        '-batch',
        '-notext',
        '-config',
        'ca.cnf',
        '-cert',
        'ca.crt',
        '-keyfile',
        'ca.key',
        '-startdate',
        opensslTime(notBefore),
        '-enddate',
        opensslTime(notAfter),
        '-extfile',
        `${id}.ext`,
        '-in',
        `${id}.csr`,
        '-out',
        `${id}.crt`,
      ]);
      return {
        key: readFileSync(join(dir, `${id}.key`), 'utf8'),
        cert: readFileSync(join(dir, `${id}.crt`), 'utf8'),
      };
    },
    destroy() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
