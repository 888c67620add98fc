import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBadField, type TestService, testService } from '../../helpers/service.js';

// The hosted API's status-page incident routes, as its CLI calls them (docs/api.md, "Status-page incidents").

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Account = 'A' | 'B';
const req: TestService['request'] = (...args) => svc.request(...args);

/** A status-page service as the API answers it (what the CLI sends back in `services`). */
async function service(
  name = 'API',
  account: Account = 'A',
): Promise<Record<string, unknown> & { id: string }> {
  const res = await req('POST', '/v1/status-pages/services', { name }, account);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Creates an incident the way `checkly incidents create` does and answers it. */
async function create(body: Record<string, unknown> = {}, account: Account = 'A') {
  const s = await service('Checkout', account);
  const res = await req(
    'POST',
    '/v1/status-pages/incidents',
    {
      name: 'Checkout slow',
      severity: 'CRITICAL',
      services: [{ id: s.id, name: s.name, accountId: s.accountId }],
      incidentUpdates: [{ description: 'We are investigating this incident.', status: 'INVESTIGATING' }],
      ...body,
    },
    account,
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const ENTRY_KEYS = [
  'created_at',
  'duration',
  'id',
  'incidentUpdates',
  'lastUpdateStatus',
  'name',
  'services',
  'severity',
  'updated_at',
];

describe('/v1/status-pages/incidents', () => {
  it('creates an incident with the hosted severity and reads it back whole', async () => {
    const incident = await create();
    expect(Object.keys(incident).sort()).toEqual(ENTRY_KEYS);
    expect(incident).toMatchObject({
      name: 'Checkout slow',
      severity: 'CRITICAL',
      lastUpdateStatus: 'INVESTIGATING',
      services: [{ name: 'Checkout' }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'We are investigating this incident.' }],
    });
    expect(incident.services[0].accountId).toEqual(expect.any(String));
    const got = await req('GET', `/v1/status-pages/incidents/${incident.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({
      id: incident.id,
      severity: 'CRITICAL',
      lastUpdateStatus: 'INVESTIGATING',
    });
    // The same incident through /v1/incidents: its impact is the one CRITICAL counts as.
    const old = await req('GET', `/v1/incidents/${incident.id}`);
    expect(old.json()).toMatchObject({ impact: 'MAJOR' });
  });

  it('takes MEDIUM (MINOR on the public pages) and its updates default to INVESTIGATING', async () => {
    const incident = await create({ severity: 'MEDIUM', incidentUpdates: [{ description: 'Looking' }] });
    expect(incident.severity).toBe('MEDIUM');
    expect(incident.incidentUpdates[0].status).toBe('INVESTIGATING');
    expect((await req('GET', `/v1/incidents/${incident.id}`)).json().impact).toBe('MINOR');
  });

  it('lists the incidents of the account in cursor pages, the literal path winning over a status page id', async () => {
    const a = await create({ name: 'first' });
    const b = await create({ name: 'second' });
    const page1 = await req('GET', '/v1/status-pages/incidents?limit=1');
    expect(page1.statusCode, page1.body).toBe(200);
    const body1 = page1.json();
    expect(body1.length).toBe(1);
    expect(body1.nextId).toEqual(expect.any(String));
    const all: { id: string }[] = [...body1.entries];
    let nextId: string | null = body1.nextId;
    while (nextId) {
      const page = (await req('GET', `/v1/status-pages/incidents?limit=100&nextId=${nextId}`)).json();
      all.push(...page.entries);
      nextId = page.nextId;
    }
    const ids = all.map((e) => e.id);
    expect(ids).toContain(a.id);
    expect(ids).toContain(b.id);
    expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('shows incidents made with /v1/incidents, their impact as severity', async () => {
    const res = await req('POST', '/v1/incidents', { name: 'Planned work', impact: 'MAINTENANCE' });
    const id = res.json().id;
    const got = (await req('GET', `/v1/status-pages/incidents/${id}`)).json();
    expect(got).toMatchObject({ severity: 'MAINTENANCE', lastUpdateStatus: null, incidentUpdates: [] });
  });

  it('never shows another account’s incidents', async () => {
    const secret = 'planted-secret-7f3a9c-db-password';
    const other = await create({ name: secret }, 'B');
    expect((await req('GET', `/v1/status-pages/incidents/${other.id}`, undefined, 'A')).statusCode).toBe(404);
    const list = await req('GET', '/v1/status-pages/incidents?limit=100', undefined, 'A');
    expect(list.body).not.toContain(secret);
    expect(list.body).not.toContain(other.id);
    for (const [method, url, body] of [
      ['PUT', `/v1/status-pages/incidents/${other.id}`, { name: 'x', severity: 'MINOR', services: [] }],
      ['PATCH', `/v1/status-pages/incidents/${other.id}`, { severity: 'MINOR' }],
      ['DELETE', `/v1/status-pages/incidents/${other.id}`, undefined],
      ['GET', `/v1/status-pages/incidents/${other.id}/incident-updates`, undefined],
      ['POST', `/v1/status-pages/incidents/${other.id}/incident-updates`, { description: 'x' }],
    ] as const) {
      const res = await req(method, url, body, 'A');
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.body).not.toContain(secret);
    }
    expect((await req('GET', `/v1/status-pages/incidents/${other.id}`, undefined, 'B')).json().name).toBe(
      secret,
    );
  });

  it('refuses a bad body naming the field', async () => {
    const s = await service();
    const ok = {
      name: 'n',
      severity: 'MINOR',
      services: [{ id: s.id, name: s.name, accountId: s.accountId }],
    };
    expectBadField(
      await req('POST', '/v1/status-pages/incidents', { ...ok, severity: 'SEVERE' }),
      'severity',
    );
    expectBadField(await req('POST', '/v1/status-pages/incidents', { ...ok, name: undefined }), 'name');
    expectBadField(await req('POST', '/v1/status-pages/incidents', { ...ok, colour: 'red' }), 'colour');
    expectBadField(await req('POST', '/v1/status-pages/incidents', { ...ok, duration: 'long' }), 'duration');
    expectBadField(
      await req('POST', '/v1/status-pages/incidents', { ...ok, services: [{ id: 'no-such-service' }] }),
      'services[0].id',
    );
    expectBadField(await req('GET', '/v1/status-pages/incidents?nextId=nonsense'), 'nextId', 'querystring');
  });

  it('accepts the fields it answered sent back whole', async () => {
    const incident = await create();
    const res = await req('PUT', `/v1/status-pages/incidents/${incident.id}`, {
      ...incident,
      name: 'Renamed',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: incident.id, name: 'Renamed', severity: 'CRITICAL' });
  });

  it('PUT replaces name, severity and services; PATCH changes only what it names', async () => {
    const incident = await create();
    const other = await service('Search');
    const put = await req('PUT', `/v1/status-pages/incidents/${incident.id}`, {
      name: 'Search down',
      severity: 'MAJOR',
      services: [{ id: other.id, name: other.name, accountId: other.accountId }],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      name: 'Search down',
      severity: 'MAJOR',
      services: [{ id: other.id }],
    });
    expect(put.json().services).toHaveLength(1);
    expectBadField(
      await req('PUT', `/v1/status-pages/incidents/${incident.id}`, { name: 'x', severity: 'MINOR' }),
      'services',
    );
    const patch = await req('PATCH', `/v1/status-pages/incidents/${incident.id}`, { severity: 'MINOR' });
    expect(patch.statusCode, patch.body).toBe(200);
    expect(patch.json()).toMatchObject({
      name: 'Search down',
      severity: 'MINOR',
      services: [{ id: other.id }],
    });
    expect(patch.json().updated_at).toEqual(expect.any(String));
    expect((await req('GET', `/v1/incidents/${incident.id}`)).json().impact).toBe('MINOR');
  });

  it('a PUT of /v1/incidents keeps the severity while the impact it counts as stays', async () => {
    const incident = await create({ severity: 'CRITICAL' });
    await req('PUT', `/v1/incidents/${incident.id}`, { name: 'same impact', impact: 'MAJOR' });
    expect((await req('GET', `/v1/status-pages/incidents/${incident.id}`)).json().severity).toBe('CRITICAL');
    await req('PUT', `/v1/incidents/${incident.id}`, { name: 'lower', impact: 'MINOR' });
    expect((await req('GET', `/v1/status-pages/incidents/${incident.id}`)).json().severity).toBe('MINOR');
  });

  it('deletes an incident with its updates; then 404', async () => {
    const incident = await create();
    const del = await req('DELETE', `/v1/status-pages/incidents/${incident.id}`);
    expect(del.statusCode).toBe(204);
    expect((await req('GET', `/v1/status-pages/incidents/${incident.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/status-pages/incidents/${incident.id}`)).statusCode).toBe(404);
    const left = await svc.context.db
      .selectFrom('incident_updates')
      .select('id')
      .where('incident_id', '=', incident.id)
      .execute();
    expect(left).toEqual([]);
  });
});

describe('/v1/status-pages/incidents/{incidentId}/incident-updates', () => {
  it('adds, lists, reads, changes and deletes updates', async () => {
    const incident = await create();
    const base = `/v1/status-pages/incidents/${incident.id}/incident-updates`;
    const added = await req('POST', base, { description: 'Fix deployed', status: 'MONITORING' });
    expect(added.statusCode, added.body).toBe(200);
    const update = added.json();
    expect(update).toMatchObject({
      description: 'Fix deployed',
      status: 'MONITORING',
      notifySubscribers: false,
    });

    const list = await req('GET', base);
    expect(list.statusCode).toBe(200);
    expect(list.json().map((u: { status: string }) => u.status)).toEqual(['MONITORING', 'INVESTIGATING']);
    expect((await req('GET', `/v1/status-pages/incidents/${incident.id}`)).json().lastUpdateStatus).toBe(
      'MONITORING',
    );

    const one = await req('GET', `${base}/${update.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(update);

    const put = await req('PUT', `${base}/${update.id}`, {
      ...update,
      description: 'Fix deployed to all regions',
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      id: update.id,
      description: 'Fix deployed to all regions',
      status: 'MONITORING',
    });
    expect(put.json().updated_at).toEqual(expect.any(String));
    expect((await req('GET', `${base}/${update.id}`)).json().description).toBe('Fix deployed to all regions');

    expect((await req('DELETE', `${base}/${update.id}`)).statusCode).toBe(204);
    expect((await req('GET', `${base}/${update.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `${base}/${update.id}`)).statusCode).toBe(404);
    expect((await req('PUT', `${base}/${update.id}`, { description: 'x' })).statusCode).toBe(404);
    expect((await req('GET', base)).json()).toHaveLength(1);
  });

  it('a RESOLVED update resolves the incident: the CLI lists it as resolved', async () => {
    const incident = await create();
    const base = `/v1/status-pages/incidents/${incident.id}/incident-updates`;
    expect(
      (await req('POST', base, { description: 'Incident resolved.', status: 'RESOLVED' })).statusCode,
    ).toBe(200);
    const got = (await req('GET', `/v1/status-pages/incidents/${incident.id}`)).json();
    expect(got.lastUpdateStatus).toBe('RESOLVED');
    expect((await req('GET', `/v1/incidents/${incident.id}`)).json().stoppedAt).toEqual(expect.any(String));
  });

  it('refuses a bad update body naming the field; 404 for an unknown incident', async () => {
    const incident = await create();
    const base = `/v1/status-pages/incidents/${incident.id}/incident-updates`;
    expectBadField(await req('POST', base, { status: 'MONITORING' }), 'description');
    expectBadField(await req('POST', base, { description: 'x', status: 'FIXED' }), 'status');
    expectBadField(
      await req('POST', base, { description: 'x', notifySubscribers: 'yes' }),
      'notifySubscribers',
    );
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await req('GET', `/v1/status-pages/incidents/${missing}/incident-updates`)).statusCode).toBe(404);
    expect((await req('GET', `/v1/status-pages/incidents/${missing}`)).statusCode).toBe(404);
  });
});
