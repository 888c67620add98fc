import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Where Debian installs each PostgreSQL version's server programs. */
const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The folder of `initdb` and `pg_ctl`: Debian's newest version, else the PATH's; null when none. */
export function postgresBinDir(): string | null {
  if (existsSync(DEBIAN_ROOT)) {
    const versions = readdirSync(DEBIAN_ROOT)
      .filter((v) => existsSync(join(DEBIAN_ROOT, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(DEBIAN_ROOT, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? null : join(found, '..');
}

/** The requirement of the PostgreSQL tests, for `missingRequirement`. */
export const POSTGRES_REQUIREMENT = {
  get ok() {
    return postgresBinDir() !== null;
  },
  what: 'PostgreSQL server programs (initdb, pg_ctl)',
  install: 'apt-get install postgresql',
};

/** A throwaway PostgreSQL cluster on loopback, removed by `stop`. */
export type PostgresCluster = {
  port: number;
  /** The folder holding the cluster's data and its Unix socket. */
  dir: string;
  /** The role every test connects as (superuser, trust authentication on loopback only). */
  user: string;
  /** `postgres://…/<database>` on this cluster. */
  url(database?: string): string;
  /** Runs `pg_ctl <args>` on the cluster as its owner (restart, stop -m fast…). */
  pgCtl(args: string[]): void;
  stop(): Promise<void>;
};

/** A TCP port nobody listens on now (the kernel's pick). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts a cluster in a new temporary folder: `initdb` as an unprivileged user (PostgreSQL refuses
 * root; as root the folder is given to `nobody` and the programs run through `runuser`), then
 * `pg_ctl start` listening on 127.0.0.1 only, on a free port, with trust authentication.
 * `durable: false` (the default) turns fsync off: test data need not survive a power cut; the
 * benches pass `durable: true`. `settings`: more server settings (`name=value`, as `postgres -c` takes them).
 * @throws Error when PostgreSQL is not installed or the cluster does not start (with its log).
 */
export async function startPostgresCluster(
  options: { durable?: boolean; maxConnections?: number; settings?: readonly string[] } = {},
): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error('PostgreSQL is not installed: apt-get install postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, 65534, 65534);
  const run = (program: string, args: string[]) => {
    const command = asRoot ? 'runuser' : join(bin, program);
    const argv = asRoot ? ['-u', 'nobody', '--', join(bin, program), ...args] : args;
    execFileSync(command, argv, { stdio: 'pipe', cwd: dir, timeout: 120_000 });
  };
  const user = 'outpost';
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', user, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const settings = [
    `-c listen_addresses=127.0.0.1`,
    `-c port=${port}`,
    `-c unix_socket_directories=${dir}`,
    `-c max_connections=${options.maxConnections ?? 400}`,
    ...(options.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
    ...(options.settings ?? []).map((s) => `-c ${s}`),
  ].join(' ');
  const log = join(dir, 'server.log');
  const pgCtl = (args: string[]) => run('pg_ctl', ['-D', data, '-l', log, '-o', settings, '-w', ...args]);
  try {
    pgCtl(['start']);
  } catch (err) {
    const said = spawnSync('tail', ['-n', '20', log], { encoding: 'utf8' }).stdout;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${said}`);
  }
  return {
    port,
    dir,
    user,
    url: (database = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`,
    pgCtl,
    async stop() {
      try {
        pgCtl(['stop', '-m', 'immediate']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Creates a new empty database named `outpost_<random>` (from `template`, default template1) on the
 * cluster at `adminUrl` and returns its URL.
 */
export async function createDatabase(adminUrl: string, template?: string): Promise<string> {
  const name = `outpost_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the database of `url` (its connections are closed first). */
export async function dropDatabase(adminUrl: string, url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
  } finally {
    await client.end();
  }
}
