import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { RUN_USER_CAPABILITIES } from '../../src/common/run-users.js';
import { parseServiceConfig } from '../../src/service/config.js';

/**
 * deploy/compose.postgres.yaml (docs/deployment.md, "Several replicas on PostgreSQL"): PostgreSQL 15, a one-shot
 * `migrate`, two service replicas started after both, Caddy in front of them (deploy/Caddyfile), and an agent
 * and an uptime agent pointed at Caddy. No Docker engine runs here, so the file is parsed and checked for what
 * it promises; the secrets come from deploy/.env, which the user writes.
 */
const COMPOSE = 'deploy/compose.postgres.yaml';
const read = (path: string) => readFileSync(join(PACKAGE_ROOT, path), 'utf8');
const SIX = Object.keys(RUN_USER_CAPABILITIES).sort();
const REPLICAS = ['outpost-service-1', 'outpost-service-2'];

const text = read(COMPOSE);
// Compose resolves YAML merge keys (`<<: *outpost-service`): so must the parser.
const compose = parseYaml(text, { merge: true }) as {
  services: Record<string, any>;
  volumes: Record<string, unknown>;
};
const { services } = compose;

/**
 * A Compose value with its `${NAME}`, `${NAME:-default}` and `${NAME:?message}` interpolated from `env`; an
 * unset variable without a default interpolates as empty (Compose's `:?` would stop instead).
 */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g,
    (_m, name: string, op?: string, rest?: string) =>
      env[name] !== undefined && env[name] !== '' ? env[name]! : op === '-' ? (rest ?? '') : '',
  );
}

/** The variables `${…}` of the compose file, each once. */
const VARIABLES = [...new Set([...text.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!))].sort();

/** A deploy/.env as a user would write it from the file's comments. */
const ENV = {
  POSTGRES_PASSWORD: 'f00dfeed'.repeat(6),
  OUTPOST_API_KEY: `op_${'ab'.repeat(20)}`,
  OUTPOST_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
};

describe(COMPOSE, () => {
  it('runs PostgreSQL, migrate, two service replicas, the proxy, an agent and an uptime agent', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['agent', 'agent-uptime', 'migrate', 'postgres', 'proxy', ...REPLICAS].sort(),
    );
    // Not the single-machine project: both can run on one host without sharing containers or volumes.
    expect((parseYaml(text) as { name: string }).name).not.toBe(
      (parseYaml(read('deploy/compose.yaml')) as { name: string }).name,
    );
  });

  it('builds every image from a Dockerfile of the repository', () => {
    const built = Object.entries(services).filter(([, s]) => s.build);
    expect(built.map(([name]) => name).sort()).toEqual(
      ['agent', 'agent-uptime', 'migrate', ...REPLICAS].sort(),
    );
    for (const [name, s] of built)
      expect(existsSync(join(PACKAGE_ROOT, 'deploy', s.build.context, s.build.dockerfile)), name).toBe(true);
    for (const name of ['migrate', ...REPLICAS]) {
      expect(services[name].build.dockerfile, name).toBe('Dockerfile.service');
      expect(services[name].image, name).toBe(services.migrate.image);
    }
    expect(services.agent.build.dockerfile).toBe('Dockerfile');
    expect(services['agent-uptime'].build.dockerfile).toBe('Dockerfile.uptime');
  });

  it('keeps PostgreSQL 15 on a named volume, healthy when pg_isready answers over TCP', () => {
    const { postgres } = services;
    expect(postgres.image).toBe('postgres:15');
    const volume = postgres.volumes.find((v: string) => v.endsWith(':/var/lib/postgresql/data'));
    expect(Object.keys(compose.volumes)).toContain(volume.split(':')[0]);
    const check = postgres.healthcheck.test.join(' ');
    expect(check).toMatch(/\bpg_isready\b/);
    expect(check).toContain(`-U ${postgres.environment.POSTGRES_USER}`);
    expect(check).toContain(`-d ${postgres.environment.POSTGRES_DB}`);
    expect(check).toMatch(/-h 127\.0\.0\.1/);
    expect(postgres.ports).toBeUndefined();
  });

  it('migrates once PostgreSQL is healthy, and starts each replica once it is healthy and migrated', () => {
    const { migrate } = services;
    expect(migrate.command).toEqual(['migrate']);
    expect(migrate.restart).toBe('no');
    expect(migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    // The image's entry point is the CLI: the command is its subcommand, as `service` is its CMD.
    expect(read('Dockerfile.service')).toMatch(/^ENTRYPOINT \[.*"dist\/src\/cli\.js"\]$/m);
    for (const name of REPLICAS) {
      expect(services[name].depends_on, name).toEqual({
        postgres: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      });
      expect(services[name].command, name).toBeUndefined();
      expect(services[name].restart, name).toBe('unless-stopped');
      expect(services[name].healthcheck.test.join(' '), name).toContain('/-/readiness');
      // Reached only through the proxy.
      expect(services[name].ports, name).toBeUndefined();
    }
  });

  it('gives migrate and both replicas the same database, API key and encryption key, all from deploy/.env', () => {
    const [first, ...others] = ['migrate', ...REPLICAS].map((name) => services[name].environment);
    for (const env of others) expect(env).toEqual(first);
    for (const name of ['OUTPOST_API_KEY', 'OUTPOST_ENCRYPTION_KEY'])
      expect(first[name], name).toMatch(new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`));
    const url = new URL(interpolate(first.OUTPOST_DATABASE_URL, ENV));
    const { postgres } = services;
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('postgres');
    expect(url.port).toBe('5432');
    expect(url.username).toBe(postgres.environment.POSTGRES_USER);
    expect(url.pathname).toBe(`/${postgres.environment.POSTGRES_DB}`);
    expect(first.OUTPOST_DATABASE_URL).toContain(postgres.environment.POSTGRES_PASSWORD);
    expect(postgres.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/);
    // The service starts with what the user wrote in deploy/.env.
    const env = Object.fromEntries(Object.entries(first).map(([k, v]) => [k, interpolate(String(v), ENV)]));
    const config = parseServiceConfig(env);
    expect(config.databaseUrl).toBe(url.href);
  });

  it('writes no secret into the file: every key and password is a variable of deploy/.env', () => {
    expect(VARIABLES).toEqual(
      [
        'OUTPOST_AGENT_KEY',
        'OUTPOST_API_KEY',
        'OUTPOST_APP_URL',
        'OUTPOST_ENCRYPTION_KEY',
        'POSTGRES_PASSWORD',
      ].sort(),
    );
    for (const s of Object.values(services)) {
      for (const [name, value] of Object.entries<string>(s.environment ?? {})) {
        if (/KEY|PASSWORD|DATABASE_URL/.test(name)) expect(value, name).toMatch(/\$\{[A-Z0-9_]+/);
      }
    }
  });

  it('names every variable of deploy/.env in its own comments and in docs/deployment.md', () => {
    const comments = text
      .split('\n')
      .filter((l) => l.trimStart().startsWith('#'))
      .join('\n');
    const docs = read('docs/deployment.md');
    const section = docs.slice(docs.indexOf('## Several replicas on PostgreSQL'));
    for (const name of VARIABLES) {
      expect(comments, name).toContain(name);
      expect(section, name).toContain(name);
    }
  });

  it('confines the service: node user, read-only root file system, no capability', () => {
    for (const name of ['migrate', ...REPLICAS]) {
      const s = services[name];
      expect(s.user, name).toBe('node');
      expect(s.read_only, name).toBe(true);
      expect(s.cap_drop, name).toEqual(['ALL']);
      expect(s.cap_add, name).toBeUndefined();
      expect(s.security_opt, name).toContain('no-new-privileges:true');
    }
  });

  it('puts the proxy in front on port 3000, with deploy/Caddyfile naming both replicas and checking /-/readiness', () => {
    const { proxy } = services;
    expect(proxy.image).toBe('caddy:2');
    const caddyfileMount = proxy.volumes.find((v: string) => v.split(':')[1] === '/etc/caddy/Caddyfile');
    const caddyfile = join(dirname(COMPOSE), caddyfileMount.split(':')[0]);
    expect(existsSync(join(PACKAGE_ROOT, caddyfile))).toBe(true);
    const config = read(caddyfile)
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'))
      .join('\n');

    const site = /^(\S+) \{$/m.exec(config)?.[1];
    expect(site).toBe(':3000');
    expect(proxy.ports).toEqual(['3000:3000']);
    const upstreams = /^\s*reverse_proxy ([^{\n]+) \{$/m.exec(config)?.[1]?.trim().split(/\s+/);
    expect(upstreams?.sort()).toEqual(REPLICAS.map((name) => `${name}:3000`).sort());
    expect(config).toMatch(/^\s*health_uri \/-\/readiness$/m);
    expect(config).toMatch(/^\s*flush_interval -1$/m);
    for (const name of REPLICAS)
      expect(Object.keys(proxy.depends_on), 'the proxy starts after the replicas').toContain(name);
    expect(proxy.healthcheck.test.join(' ')).toContain('http://127.0.0.1:3000/-/readiness');
  });

  it('cuts no long poll short: no proxy timeout under 60 s but for connecting and health checks', () => {
    const config = read('deploy/Caddyfile');
    const seconds = (value: string) => {
      const m = /^(\d+)(ms|s|m|h)$/.exec(value);
      if (!m) throw new Error(`duration ${value}`);
      return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    };
    const timeouts = [...config.matchAll(/^\s*(\w*timeout\w*) (\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(timeouts.length).toBeGreaterThan(0);
    for (const [directive, value] of timeouts) {
      if (directive === 'dial_timeout' || directive === 'health_timeout') continue;
      expect(seconds(value), directive).toBeGreaterThanOrEqual(60);
    }
    // Artifact uploads of up to 150 MB (157 286 400 bytes) pass.
    const limit = /max_size (\d+)MB/.exec(config)?.[1];
    expect(Number(limit) * 1_000_000).toBeGreaterThanOrEqual(157_286_400);
  });

  it('points both agents at the proxy once it is healthy, with the six capabilities for the agent and none for the uptime agent', () => {
    const { agent } = services;
    const uptime = services['agent-uptime'];
    for (const [name, s] of [
      ['agent', agent],
      ['agent-uptime', uptime],
    ] as const) {
      const url = new URL(s.environment.SERVICE_URL);
      expect(url.hostname, name).toBe('proxy');
      expect(url.port, name).toBe('3000');
      expect(s.depends_on, name).toEqual({ proxy: { condition: 'service_healthy' } });
      expect(s.environment.API_KEY, name).toMatch(/^\$\{OUTPOST_AGENT_KEY:-\}$/);
      expect(s.cap_drop, name).toEqual(['ALL']);
      expect(s.read_only, name).toBe(true);
      expect(s.sysctls['net.ipv4.ping_group_range'], name).toBe('0 2147483647');
      expect(s.security_opt, name).toContain('no-new-privileges:true');
    }
    expect([...agent.cap_add].sort()).toEqual(SIX);
    expect(uptime.cap_add).toBeUndefined();
    expect(uptime.user).toBe('node');
  });

  it('declares every named volume it mounts', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const volume of s.volumes ?? []) {
        const source = String(volume).split(':')[0]!;
        if (source.startsWith('.') || source.startsWith('/')) continue;
        expect(Object.keys(compose.volumes), `${name}: ${volume}`).toContain(source);
      }
    }
  });
});
