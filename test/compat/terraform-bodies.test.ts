import { createPrivateKey } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSecret } from '../helpers/secrets.js';
import { type TestService, testService } from '../helpers/service.js';
import { createTestCa } from '../helpers/test-ca.js';

/**
 * The request bodies Checkly's Terraform provider sends (test/compat/fixtures/terraform, where the README
 * says where each one comes from), played against a fresh service: create, read back, update, apply the
 * same update again (a second `terraform apply` must change nothing), delete, and read a 404.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One HTTP call of a fixture; strings may hold `${…}` placeholders (see {@link substitute}). */
type Call = { method: Method; path: string; body?: unknown };

/** A resource another resource points at, made with Outpost's own API before the fixture runs. */
type Reference = Call & { id: string };

/** A file of test/compat/fixtures/terraform. */
type Fixture = {
  resource: string;
  variant?: string;
  references?: Record<string, Reference>;
  create: Call;
  /** Other routes some provider releases create with, the same body. */
  alsoCreateWith?: { method: Method; path: string; why: string }[];
  /** The answer's field that names the resource in later paths. Default: `id`. */
  idField?: string;
  read: { path: string };
  /** Absent for resources whose every field forces a replacement (client certificates, triggers). */
  update?: Call;
  delete: Call;
  /** Dotted paths of sensitive body fields: their values must never appear in an answer. */
  secrets?: string[];
  /**
   * Dotted paths of credentials the provider reads back (a basic-auth password, an alert channel's integration
   * key): answered in clear, as the hosted API answers them, by a service run with OUTPOST_API_CREDENTIALS=clear
   * (docs/security.md, "Credentials in answers"), and compared like any other field.
   */
  credentials?: string[];
  /** Dotted paths (`*` for any list index) the provider never reads back (it keeps what it sent): not compared. */
  writeOnly?: string[];
  /** Dotted paths (`*` for any list index) the provider computes or ignores on read: sent empty, any value read back is no change. */
  computed?: string[];
};

const FIXTURES_DIR = join(import.meta.dirname, 'fixtures', 'terraform');

const fixtures: [string, Fixture][] = readdirSync(FIXTURES_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((name) => [name.replace(/\.json$/, ''), JSON.parse(readFileSync(join(FIXTURES_DIR, name), 'utf8'))]);

/** Fields the service sets, not compared at the top of a resource. */
const SERVICE_FIELDS = new Set(['id', 'createdAt', 'created_at', 'updatedAt', 'updated_at']);

/** Fields that may change on every write, left out when two answers are compared. */
const WRITE_TIME_FIELDS = ['updatedAt', 'updated_at'];

/** What a full `alertSettings` holds once the service merged a partial one with its defaults. */
const ALERT_SETTINGS_FIELDS = [
  'escalationType',
  'runBasedEscalation.failedRunThreshold',
  'timeBasedEscalation.minutesFailingThreshold',
  'reminders.amount',
  'reminders.interval',
  'parallelRunFailureThreshold.enabled',
  'parallelRunFailureThreshold.percentage',
];

/** The value at a dotted path (`a.b.0.c`), or undefined. */
function at(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/**
 * Replaces `${name}` placeholders: a string that is only a placeholder becomes the value itself (a
 * number stays a number), one inside text is spliced in. `read.x.y` looks into the last read.
 * Throws on an unknown name, so a typo in a fixture fails loudly.
 */
function substitute(value: unknown, vars: Record<string, unknown>): unknown {
  const lookup = (name: string): unknown => {
    const found = name.startsWith('read.') ? at(vars.read, name.slice(5)) : vars[name];
    if (found === undefined) throw new Error(`fixture placeholder \${${name}} has no value`);
    return found;
  };
  if (typeof value === 'string') {
    const whole = /^\$\{([^}]+)\}$/.exec(value);
    if (whole) return lookup(whole[1] as string);
    return value.replace(/\$\{([^}]+)\}/g, (_, name: string) => String(lookup(name)));
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, vars));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, vars)]));
  }
  return value;
}

/** True for what Go decodes an absent field to: false, 0, "", null, an empty list, an object of those. */
function isGoZero(value: unknown): boolean {
  if (value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value as object).every(isGoZero);
  return false;
}

/**
 * What Terraform would see differently after reading the resource back: each field of `sent` (at any
 * depth) against `got`. A field that comes back absent counts as Go's zero value (the provider decodes
 * into Go structs); lists compare as sets (Terraform keeps locations, tags, assertions and headers in
 * sets or maps); `retryStrategy: null` equals `{ type: "NO_RETRIES" }` (the SDK decodes both alike).
 */
function differences(
  sent: unknown,
  got: unknown,
  path: string,
  skip: { writeOnly: Set<string>; computed: Set<string> },
  top = false,
): string[] {
  const pattern = path.replace(/\.\d+(?=\.|$)/g, '.*');
  if (skip.writeOnly.has(path) || skip.writeOnly.has(pattern)) return [];
  if ((skip.computed.has(path) || skip.computed.has(pattern)) && isGoZero(sent)) return [];
  const show = (value: unknown) => JSON.stringify(value);
  if (path.endsWith('retryStrategy') && (got as { type?: string } | null)?.type === 'NO_RETRIES') got = null;
  if (got === undefined || got === null) {
    return isGoZero(sent) ? [] : [`${path}: sent ${show(sent)}, read back ${show(got)}`];
  }
  if (sent === null) return isGoZero(got) ? [] : [`${path}: sent null, read back ${show(got)}`];
  if (Array.isArray(sent)) {
    if (!Array.isArray(got) || got.length !== sent.length) {
      return [`${path}: sent ${show(sent)}, read back ${show(got)}`];
    }
    const unmatched = [...got];
    const out: string[] = [];
    sent.forEach((item, index) => {
      const itemPath = `${path}.${index}`;
      const match = unmatched.findIndex(
        (candidate) => differences(item, candidate, itemPath, skip).length === 0,
      );
      if (match >= 0) unmatched.splice(match, 1);
      else out.push(`${path}[${index}]: sent ${show(item)}, no equal item in ${show(got)}`);
    });
    return out;
  }
  if (typeof sent === 'object') {
    if (typeof got !== 'object') return [`${path}: sent ${show(sent)}, read back ${show(got)}`];
    return Object.entries(sent as Record<string, unknown>).flatMap(([key, value]) => {
      if (top && SERVICE_FIELDS.has(key)) return [];
      const child = path === '' ? key : `${path}.${key}`;
      return differences(value, (got as Record<string, unknown>)[key], child, skip);
    });
  }
  return sent === got ? [] : [`${path}: sent ${show(sent)}, read back ${show(got)}`];
}

/** Where a read-back `alertSettings` lacks a field the service's defaults should have filled. */
function missingAlertSettings(sent: unknown, got: unknown): string[] {
  if (sent === null || typeof sent !== 'object' || !('alertSettings' in sent)) return [];
  const settings = (got as { alertSettings?: unknown }).alertSettings;
  return ALERT_SETTINGS_FIELDS.filter((field) => at(settings, field) === undefined).map(
    (field) =>
      `alertSettings.${field}: absent from the read-back (partial settings not merged with defaults)`,
  );
}

/** An answer without the fields a write may move (`updated_at`). */
function withoutWriteTime(body: unknown): unknown {
  if (body === null || typeof body !== 'object') return body;
  const copy = { ...(body as Record<string, unknown>) };
  for (const field of WRITE_TIME_FIELDS) delete copy[field];
  return copy;
}

/** The values at the fixture's secret paths, in whichever bodies have them. */
function secretValues(fixture: Fixture, bodies: unknown[]): string[] {
  const values = (fixture.secrets ?? []).flatMap((path) => bodies.map((body) => at(body, path)));
  return [...new Set(values.filter((value): value is string => typeof value === 'string' && value !== ''))];
}

/** Generated client-certificate material (never committed): an encrypted key, its certificate, the CA. */
function makeClientCertificate(): Record<string, string> {
  const ca = createTestCa('Terraform Fixture CA');
  try {
    const pair = ca.issue({ commonName: 'client.acme.test', extendedKeyUsage: 'clientAuth' });
    const passphrase = 'tf-cert-passphrase-1NQ';
    const key = createPrivateKey(pair.key).export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase,
    }) as string;
    return { cert: pair.cert, key, passphrase, ca: ca.caCert };
  } finally {
    ca.destroy();
  }
}

describe('Terraform provider bodies', () => {
  let svc: TestService;
  let generated: Record<string, string>;

  beforeAll(async () => {
    // As a Terraform user runs the service (docs/api.md, "Compatibility with Checkly's clients"): the credentials
    // the provider reads back are answered in clear, so a plan converges.
    svc = await testService({ apiCredentials: 'clear' });
    await svc.app.ready();
    generated = makeClientCertificate();
  });
  afterAll(async () => {
    await svc?.close();
  });

  /** Sends one call and returns its status, text and JSON (null when not JSON). */
  async function send(call: Call, vars: Record<string, unknown>) {
    const path = substitute(call.path, vars) as string;
    const body = call.body === undefined ? undefined : substitute(call.body, vars);
    const res = await svc.request(call.method, path, body);
    let json: unknown = null;
    try {
      json = res.json();
    } catch {}
    return {
      label: `${call.method} ${path} → ${res.statusCode} ${res.body}`,
      status: res.statusCode,
      json,
      text: res.body,
    };
  }

  const cases = fixtures.flatMap(([name, fixture]) => [
    {
      title: `${name} (${fixture.resource}): ${fixture.create.method} ${fixture.create.path}`,
      fixture,
      create: fixture.create,
    },
    ...(fixture.alsoCreateWith ?? []).map((route) => ({
      title: `${name} (${fixture.resource}): ${route.method} ${route.path}`,
      fixture,
      create: { ...fixture.create, method: route.method, path: route.path },
    })),
  ]);

  for (const { title, fixture, create } of cases) {
    it(`${title}: ${fixture.update ? 'create, read, update, re-apply, delete' : 'create, read, delete'}`, async () => {
      const vars: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(generated)) vars[`generated.${key}`] = value;
      for (const [name, reference] of Object.entries(fixture.references ?? {})) {
        const made = await send(reference, vars);
        expect(made.status, `reference ${name}: ${made.label}`).toBeLessThan(300);
        vars[`ref.${name}`] = at(made.json, reference.id);
      }
      const secrets: string[] = [];
      /** Fails when an answer holds a secret sent so far. */
      const noLeak = (answer: { text: string }) => {
        for (const secret of secrets) expectNoSecret(answer.text, secret);
      };
      const found: string[] = [];

      // The create body's placeholders name no id, so its secrets are known before it is sent.
      secrets.push(
        ...secretValues(fixture, [create.body === undefined ? undefined : substitute(create.body, vars)]),
      );
      const created = await send(create, vars);
      noLeak(created);
      expect([200, 201], created.label).toContain(created.status);
      const id = at(created.json, fixture.idField ?? 'id');
      expect(id, `${created.label}: no ${fixture.idField ?? 'id'}`).toBeDefined();
      vars.id = id;
      const createBody = create.body === undefined ? undefined : substitute(create.body, vars);

      const read = await send({ method: 'GET', path: fixture.read.path }, vars);
      noLeak(read);
      expect(read.status, read.label).toBe(200);
      vars.read = read.json;
      const skip = { writeOnly: new Set(fixture.writeOnly ?? []), computed: new Set(fixture.computed ?? []) };
      if (createBody !== undefined) {
        found.push(
          ...differences(createBody, read.json, '', skip, true).map((line) => `create → read: ${line}`),
        );
        found.push(...missingAlertSettings(createBody, read.json).map((line) => `create → read: ${line}`));
      }

      if (fixture.update) {
        const updateBody = substitute(fixture.update.body, vars);
        secrets.push(...secretValues(fixture, [updateBody]));
        const updated = await send(fixture.update, vars);
        noLeak(updated);
        expect(updated.status, updated.label).toBe(200);

        const before = await send({ method: 'GET', path: fixture.read.path }, vars);
        noLeak(before);
        expect(before.status, before.label).toBe(200);
        const again = await send(fixture.update, vars);
        noLeak(again);
        expect(again.status, again.label).toBe(200);
        // Soft: a re-apply that moves the state still lets the rest of the cycle report.
        expect
          .soft(
            withoutWriteTime(again.json),
            `the second apply's answer differs from the state before it: ${again.label}`,
          )
          .toEqual(withoutWriteTime(before.json));
        const after = await send({ method: 'GET', path: fixture.read.path }, vars);
        noLeak(after);
        expect
          .soft(withoutWriteTime(after.json), 'the second apply changed the stored state')
          .toEqual(withoutWriteTime(before.json));
        found.push(
          ...differences(updateBody, before.json, '', skip, true).map((line) => `update → read: ${line}`),
        );
        found.push(...missingAlertSettings(updateBody, before.json).map((line) => `update → read: ${line}`));
      }

      const deleted = await send(fixture.delete, vars);
      noLeak(deleted);
      expect([200, 204], deleted.label).toContain(deleted.status);
      const gone = await send({ method: 'GET', path: fixture.read.path }, vars);
      expect(gone.status, gone.label).toBe(404);

      expect(
        found,
        `fields Terraform would read back differently from what it sent:\n${found.join('\n')}\n`,
      ).toEqual([]);
    });
  }

  it('tells apart what Terraform would see as a change from what it would not', () => {
    const none = { writeOnly: new Set<string>(), computed: new Set<string>() };
    const sent = {
      id: '',
      name: 'a',
      tags: ['x', 'y'],
      muted: false,
      request: { assertions: [{ target: '1', edit: false }] },
    };
    // Absent zero values, list order and service fields at the top are no change.
    expect(
      differences(
        sent,
        { id: 'c1', name: 'a', tags: ['y', 'x'], request: { assertions: [{ target: '1' }] } },
        '',
        none,
        true,
      ),
    ).toEqual([]);
    expect(
      differences(
        sent,
        { name: 'b', tags: ['x'], muted: true, request: { assertions: [{ target: '2' }] } },
        '',
        none,
        true,
      ),
    ).toEqual([
      'name: sent "a", read back "b"',
      'tags: sent ["x","y"], read back ["x"]',
      'muted: sent false, read back true',
      'request.assertions[0]: sent {"target":"1","edit":false}, no equal item in [{"target":"2"}]',
    ]);
    expect(
      differences({ retryStrategy: null }, { retryStrategy: { type: 'NO_RETRIES' } }, '', none, true),
    ).toEqual([]);
    // A masked value is a change, unless the provider never reads it back.
    expect(differences({ auth: { password: 'p' } }, { auth: { password: '*****' } }, '', none)).toHaveLength(
      1,
    );
    const writeOnly = { writeOnly: new Set(['auth.password']), computed: new Set<string>() };
    expect(differences({ auth: { password: 'p' } }, { auth: { password: '*****' } }, '', writeOnly)).toEqual(
      [],
    );
    const computed = { writeOnly: new Set<string>(), computed: new Set(['token']) };
    expect(differences({ token: '' }, { token: 'abc' }, '', computed)).toEqual([]);
    expect(differences({ token: 'mine' }, { token: 'abc' }, '', computed)).toHaveLength(1);
    expect(
      missingAlertSettings({ alertSettings: {} }, { alertSettings: { escalationType: 'RUN_BASED' } }),
    ).toHaveLength(6);
  });

  it('has a fixture for every resource the provider manages here', () => {
    const resources = new Set(fixtures.map(([, fixture]) => fixture.resource));
    expect([...resources].sort()).toEqual(
      [
        'checkly_alert_channel',
        'checkly_check',
        'checkly_check_group',
        'checkly_client_certificate',
        'checkly_dashboard',
        'checkly_dns_monitor',
        'checkly_environment_variable',
        'checkly_heartbeat_monitor',
        'checkly_icmp_monitor',
        'checkly_maintenance_windows',
        'checkly_private_location',
        'checkly_snippet',
        'checkly_status_page',
        'checkly_status_page_service',
        'checkly_tcp_monitor',
        'checkly_trigger_check',
        'checkly_trigger_group',
        'checkly_url_monitor',
      ].sort(),
    );
  });
});
