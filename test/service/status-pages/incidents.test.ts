import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

type Account = 'A' | 'B';
const req: TestService['request'] = (...args) => svc.request(...args);

async function create(body: Record<string, unknown> = {}, account: Account = 'A') {
  const res = await req('POST', '/v1/incidents', { name: 'API down', ...body }, account);
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function service(
  name = 'API',
  account: Account = 'A',
): Promise<Record<string, unknown> & { id: string }> {
  return (await req('POST', '/v1/status-pages/services', { name }, account)).json();
}

async function count(table: 'incidents' | 'incident_updates'): Promise<number> {
  const row = await svc.context.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UPDATE_KEYS = [
  'created_at',
  'description',
  'id',
  'incidentId',
  'notifySubscribers',
  'publicIncidentUpdateDate',
  'status',
  'updated_at',
];

describe('POST /v1/incidents', () => {
  it('creates an incident with the defaults', async () => {
    const before = Date.now();
    const incident = await create();
    expect(Object.keys(incident).sort()).toEqual([
      'created_at',
      'dashboardId',
      'id',
      'impact',
      'incidentUpdates',
      'name',
      'services',
      'startedAt',
      'stoppedAt',
      'updated_at',
    ]);
    expect(incident).toMatchObject({
      name: 'API down',
      impact: 'MINOR',
      stoppedAt: null,
      dashboardId: 1,
      services: [],
      incidentUpdates: [],
      updated_at: null,
    });
    expect(incident.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(incident.startedAt)).toBeGreaterThanOrEqual(before);
    expect(incident.created_at).toMatch(ISO);
  });

  it('stores services and first updates, answering the updates newest first', async () => {
    const s = await service();
    const incident = await create({
      impact: 'MAJOR',
      startedAt: '2026-01-01T10:00:00.000Z',
      stoppedAt: null,
      services: [{ id: s.id }],
      incidentUpdates: [
        { status: 'INVESTIGATING', description: 'looking' },
        {
          status: 'IDENTIFIED',
          description: 'found it',
          notifySubscribers: true,
          publicIncidentUpdateDate: '2026-01-01T10:05:00.000Z',
        },
      ],
    });
    expect(incident).toMatchObject({ impact: 'MAJOR', startedAt: '2026-01-01T10:00:00.000Z', services: [s] });
    expect(incident.incidentUpdates.map((u: { status: string }) => u.status)).toEqual([
      'IDENTIFIED',
      'INVESTIGATING',
    ]);
    const [latest, first] = incident.incidentUpdates;
    expect(Object.keys(latest).sort()).toEqual(UPDATE_KEYS);
    expect(latest).toMatchObject({
      incidentId: incident.id,
      notifySubscribers: true,
      publicIncidentUpdateDate: '2026-01-01T10:05:00.000Z',
      updated_at: null,
    });
    expect(first).toMatchObject({ notifySubscribers: false, publicIncidentUpdateDate: first.created_at });
  });

  it('stops an incident created with a RESOLVED update', async () => {
    const incident = await create({ incidentUpdates: [{ status: 'RESOLVED', description: 'fixed' }] });
    expect(incident.stoppedAt).toMatch(ISO);
  });

  it.each([
    ['missing name', { name: undefined }, 'name'],
    ['name of 256', { name: 'x'.repeat(256) }, 'name'],
    ['bad impact', { impact: 'CRITICAL' }, 'impact'],
    ['startedAt not a date-time', { startedAt: '2026-01-01' }, 'startedAt'],
    [
      'stoppedAt before startedAt',
      { startedAt: '2026-01-02T00:00:00Z', stoppedAt: '2026-01-01T23:59:59Z' },
      'stoppedAt',
    ],
    ['unknown service', { services: [{ id: 'nope' }] }, 'services[0].id'],
    [
      'update without description',
      { incidentUpdates: [{ status: 'INVESTIGATING' }] },
      'incidentUpdates[0].description',
    ],
    [
      'update with a bad status',
      { incidentUpdates: [{ status: 'FIXED', description: 'd' }] },
      'incidentUpdates[0].status',
    ],
    ['dashboardId', { dashboardId: 1 }, 'dashboardId'],
  ])('rejects %s with 400 naming %s and stores nothing', async (_label, override, field) => {
    const before = [await count('incidents'), await count('incident_updates')];
    const res = await req('POST', '/v1/incidents', {
      name: 'x',
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'd' }],
      ...override,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      attributes: { field, in: 'body' },
    });
    expect([await count('incidents'), await count('incident_updates')]).toEqual(before);
  });

  it('rejects a service of another account', async () => {
    const theirs = await service('B service', 'B');
    const res = await req('POST', '/v1/incidents', { name: 'x', services: [{ id: theirs.id }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes.field).toBe('services[0].id');
  });

  it('accepts stoppedAt equal to startedAt and a name of 255', async () => {
    const at = '2026-03-01T00:00:00.000Z';
    expect((await create({ name: 'x'.repeat(255), startedAt: at, stoppedAt: at })).stoppedAt).toBe(at);
  });
});

describe('GET /v1/incidents/{id} and GET /v1/incidents', () => {
  it('answers only the latest update unless includeAllIncidentUpdates=true', async () => {
    const incident = await create({ incidentUpdates: [{ status: 'INVESTIGATING', description: 'one' }] });
    await req('POST', `/v1/incidents/${incident.id}/updates`, { status: 'MONITORING', description: 'two' });
    const latest = (await req('GET', `/v1/incidents/${incident.id}`)).json();
    expect(latest.incidentUpdates.map((u: { description: string }) => u.description)).toEqual(['two']);
    const all = (await req('GET', `/v1/incidents/${incident.id}?includeAllIncidentUpdates=true`)).json();
    expect(all.incidentUpdates.map((u: { description: string }) => u.description)).toEqual(['two', 'one']);
    expect(all.updated_at).toMatch(ISO);
    expect((await req('GET', `/v1/incidents/${incident.id}?includeAllIncidentUpdates=yes`)).statusCode).toBe(
      400,
    );
  });

  it('answers 404 for unknown ids', async () => {
    expect((await req('GET', '/v1/incidents/nope')).statusCode).toBe(404);
  });

  it('lists newest first with limit and page at their edges', async () => {
    const fresh = await testService();
    try {
      const post = (name: string) =>
        fresh.app.inject({ method: 'POST', url: '/v1/incidents', headers: fresh.auth(), payload: { name } });
      for (let i = 0; i < 12; i++) await post(`i${i}`);
      const get = (q: string) =>
        fresh.app.inject({ method: 'GET', url: `/v1/incidents${q}`, headers: fresh.auth() });
      const names = (r: { json(): { name: string }[] }) => r.json().map((x) => x.name);
      expect(names(await get(''))).toEqual(['i11', 'i10', 'i9', 'i8', 'i7', 'i6', 'i5', 'i4', 'i3', 'i2']);
      expect(names(await get('?page=2'))).toEqual(['i1', 'i0']);
      expect(names(await get('?limit=1'))).toEqual(['i11']);
      expect(names(await get('?limit=100'))).toHaveLength(12);
      for (const q of ['limit=0', 'limit=101', 'page=0']) {
        const res = await get(`?${q}`);
        expect(res.statusCode).toBe(400);
        expect(res.json().attributes).toMatchObject({ field: q.split('=')[0], in: 'querystring' });
      }
      expect(
        (await fresh.app.inject({ method: 'GET', url: '/v1/incidents', headers: fresh.auth('B') })).json(),
      ).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe('PUT /v1/incidents/{id}', () => {
  it('replaces name and impact, keeps omitted times, answers the latest description', async () => {
    const incident = await create({
      startedAt: '2026-01-01T00:00:00.000Z',
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'on it' }],
    });
    const res = await req('PUT', `/v1/incidents/${incident.id}`, { name: 'renamed', impact: 'MAINTENANCE' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      id: incident.id,
      name: 'renamed',
      impact: 'MAINTENANCE',
      startedAt: '2026-01-01T00:00:00.000Z',
      stoppedAt: null,
      dashboardId: 1,
      incidentUpdates: 'on it',
    });
    expect(body.updated_at).toMatch(ISO);
    const bare = await create();
    expect(
      (await req('PUT', `/v1/incidents/${bare.id}`, { name: 'n', impact: 'MINOR' })).json().incidentUpdates,
    ).toBeNull();
  });

  it('with probe=true validates and answers without storing', async () => {
    const incident = await create();
    const s = await service('probe svc');
    const res = await req('PUT', `/v1/incidents/${incident.id}?probe=true`, {
      name: 'dry',
      impact: 'MAJOR',
      services: [{ id: s.id }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'dry', impact: 'MAJOR', services: [s] });
    expect((await req('GET', `/v1/incidents/${incident.id}`)).json()).toEqual(incident);
    const bad = await req('PUT', `/v1/incidents/${incident.id}?probe=true`, {
      name: 'dry',
      impact: 'MAJOR',
      stoppedAt: '2000-01-01T00:00:00Z',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes.field).toBe('stoppedAt');
  });

  it.each([
    ['missing name', { impact: 'MINOR' }, 'name'],
    ['missing impact', { name: 'n' }, 'impact'],
    ['bad stoppedAt', { name: 'n', impact: 'MINOR', stoppedAt: 'soon' }, 'stoppedAt'],
  ])('rejects %s', async (_label, body, field) => {
    const incident = await create();
    const res = await req('PUT', `/v1/incidents/${incident.id}`, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field, in: 'body' });
    expect((await req('GET', `/v1/incidents/${incident.id}`)).json()).toEqual(incident);
  });

  it('answers 404 for unknown ids and a bad probe value with 400', async () => {
    expect((await req('PUT', '/v1/incidents/nope', { name: 'n', impact: 'MINOR' })).statusCode).toBe(404);
    const incident = await create();
    const res = await req('PUT', `/v1/incidents/${incident.id}?probe=perhaps`, {
      name: 'n',
      impact: 'MINOR',
    });
    expect(res.json().attributes).toMatchObject({ field: 'probe', in: 'querystring' });
  });
});

describe('POST /v1/incidents/{incidentId}/updates', () => {
  it('answers 201 with an array holding the created update', async () => {
    const incident = await create();
    const res = await req('POST', `/v1/incidents/${incident.id}/updates`, {
      status: 'IDENTIFIED',
      description: 'cause found',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toHaveLength(1);
    expect(Object.keys(body[0]).sort()).toEqual(UPDATE_KEYS);
    expect(body[0]).toMatchObject({
      status: 'IDENTIFIED',
      description: 'cause found',
      incidentId: incident.id,
      notifySubscribers: false,
      updated_at: null,
    });
  });

  it('RESOLVED sets stoppedAt when null and leaves a set one alone', async () => {
    const open = await create();
    await req('POST', `/v1/incidents/${open.id}/updates`, { status: 'RESOLVED', description: 'done' });
    expect((await req('GET', `/v1/incidents/${open.id}`)).json().stoppedAt).toMatch(ISO);
    const at = '2026-02-01T00:00:00.000Z';
    const closed = await create({ startedAt: '2026-01-01T00:00:00.000Z', stoppedAt: at });
    await req('POST', `/v1/incidents/${closed.id}/updates`, { status: 'RESOLVED', description: 'done' });
    expect((await req('GET', `/v1/incidents/${closed.id}`)).json().stoppedAt).toBe(at);
  });

  it.each([
    ['missing status', { description: 'd' }, 'status'],
    ['missing description', { status: 'MONITORING' }, 'description'],
    ['unknown status', { status: 'DONE', description: 'd' }, 'status'],
    ['empty description', { status: 'MONITORING', description: '' }, 'description'],
  ])('rejects %s', async (_label, body, field) => {
    const incident = await create();
    const before = await count('incident_updates');
    const res = await req('POST', `/v1/incidents/${incident.id}/updates`, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field, in: 'body' });
    expect(await count('incident_updates')).toBe(before);
  });

  it('answers 404 for an unknown incident', async () => {
    expect(
      (await req('POST', '/v1/incidents/nope/updates', { status: 'MONITORING', description: 'd' }))
        .statusCode,
    ).toBe(404);
  });
});

describe('DELETE /v1/incidents/{id}', () => {
  it('deletes with its updates (204), then 404', async () => {
    const incident = await create({ incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }] });
    const before = await count('incident_updates');
    expect((await req('DELETE', `/v1/incidents/${incident.id}`)).statusCode).toBe(204);
    expect(await count('incident_updates')).toBe(before - 1);
    expect((await req('GET', `/v1/incidents/${incident.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/incidents/${incident.id}`)).statusCode).toBe(404);
  });
});

describe('incidents on status pages', () => {
  it('shows incidents of a page’s services with severity, lastUpdateStatus and duration', async () => {
    const [shown, other] = [await service('shown'), await service('other')];
    const page = (
      await req('POST', '/v1/status-pages', {
        name: 'p',
        url: 'incident-page',
        cards: [{ name: 'c', services: [{ id: shown.id }] }],
      })
    ).json();
    const incident = await create({
      impact: 'MAJOR',
      startedAt: '2026-01-01T00:00:00.000Z',
      stoppedAt: '2026-01-01T01:30:00.000Z',
      services: [{ id: shown.id }, { id: other.id }],
      incidentUpdates: [
        { status: 'INVESTIGATING', description: 'a' },
        { status: 'RESOLVED', description: 'b' },
      ],
    });
    await create({ name: 'elsewhere', services: [{ id: other.id }] });
    const got = (await req('GET', `/v1/status-pages/${page.id}`)).json();
    expect(got.incidents).toHaveLength(1);
    const [seen] = got.incidents;
    expect(Object.keys(seen).sort()).toEqual([
      'created_at',
      'duration',
      'id',
      'incidentUpdates',
      'lastUpdateStatus',
      'name',
      'services',
      'severity',
      'updated_at',
    ]);
    expect(seen).toMatchObject({
      id: incident.id,
      severity: 'MAJOR',
      lastUpdateStatus: 'RESOLVED',
      duration: 90 * 60_000,
      services: [shown, other],
    });
    expect(Object.keys(seen.incidentUpdates[0]).sort()).toEqual([
      'created_at',
      'description',
      'id',
      'notifySubscribers',
      'publicIncidentUpdateDate',
      'status',
    ]);
    expect(seen.incidentUpdates.map((u: { description: string }) => u.description)).toEqual(['b', 'a']);

    // Deleting a service that is on no card detaches it from its incidents.
    expect((await req('DELETE', `/v1/status-pages/services/${other.id}`)).statusCode).toBe(204);
    expect((await req('GET', `/v1/incidents/${incident.id}`)).json().services).toEqual([shown]);
  });

  it('counts the duration of an open incident up to now', async () => {
    const s = await service('open');
    const page = (
      await req('POST', '/v1/status-pages', {
        name: 'p',
        url: 'open-page',
        cards: [{ name: 'c', services: [{ id: s.id }] }],
      })
    ).json();
    const startedAt = new Date(Date.now() - 60_000).toISOString();
    await create({ startedAt, services: [{ id: s.id }] });
    const [seen] = (await req('GET', `/v1/status-pages/${page.id}`)).json().incidents;
    expect(seen.duration).toBeGreaterThanOrEqual(60_000);
    expect(seen.duration).toBeLessThan(120_000);
    expect(seen.lastUpdateStatus).toBeNull();
  });
});

describe('two accounts', () => {
  it('account B can neither read, list, change, update nor delete account A’s incidents', async () => {
    const incident = await create({ incidentUpdates: [{ status: 'INVESTIGATING', description: 'secret' }] });
    for (const [method, url, payload] of [
      ['GET', `/v1/incidents/${incident.id}`],
      ['PUT', `/v1/incidents/${incident.id}`, { name: 'x', impact: 'MINOR' }],
      ['PUT', `/v1/incidents/${incident.id}?probe=true`, { name: 'x', impact: 'MINOR' }],
      ['POST', `/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'x' }],
      ['DELETE', `/v1/incidents/${incident.id}`],
    ] as const) {
      expect((await req(method, url, payload, 'B')).statusCode, `${method} ${url}`).toBe(404);
    }
    expect(
      JSON.stringify((await req('GET', '/v1/incidents?limit=100', undefined, 'B')).json()),
    ).not.toContain(incident.id);
    expect((await req('GET', `/v1/incidents/${incident.id}?includeAllIncidentUpdates=true`)).json()).toEqual(
      incident,
    );
  });
});
