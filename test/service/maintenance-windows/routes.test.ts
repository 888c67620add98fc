import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createCheck,
  expectBadField,
  icmpBody,
  type TestService,
  testService,
} from '../../helpers/service.js';

let svc: TestService;
beforeEach(async () => {
  svc = await testService();
});
afterEach(async () => svc.close());

/** The window the Go SDK's integration tests create (checkly_test.go, testMaintenanceWindow), echoed fields and all. */
const sdkWindow = {
  id: 1,
  name: 'TEST',
  startsAt: '2014-08-24T00:00:00.000Z',
  endsAt: '2014-08-24T00:00:00.000Z',
  repeatInterval: 10,
  repeatUnit: 'MONTH',
  repeatEndsAt: '2014-08-24T00:00:00.000Z',
  tags: ['string'],
  created_at: '2013-08-24',
  updated_at: '2014-08-24',
};

const hour = 3_600_000;

describe('/v1/maintenance-windows', () => {
  it('creates, reads, lists, updates and deletes a window as the hosted API answers it', async () => {
    const created = await svc.request('POST', '/v1/maintenance-windows', sdkWindow);
    expect(created.statusCode, created.body).toBe(201);
    const window = created.json();
    // What the SDK compares (all but id and the timestamps) comes back as sent.
    expect(window).toMatchObject({
      name: 'TEST',
      startsAt: '2014-08-24T00:00:00.000Z',
      endsAt: '2014-08-24T00:00:00.000Z',
      repeatInterval: 10,
      repeatUnit: 'MONTH',
      repeatEndsAt: '2014-08-24T00:00:00.000Z',
      tags: ['string'],
      timezone: 'UTC',
      pauseRuns: true,
      silenceAlerts: true,
      active: false,
      nextOccurrence: null,
    });
    expect(window.id).toEqual(expect.any(Number));
    // The echoed id and created_at were ignored: the service set its own.
    expect(window.created_at).not.toBe('2013-08-24');
    expect(Date.parse(window.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(window.updated_at).toBeNull();

    const read = await svc.request('GET', `/v1/maintenance-windows/${window.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(window);

    const second = await svc.request('POST', '/v1/maintenance-windows', {
      name: 'nightly',
      startsAt: '2026-01-01T02:00:00+01:00',
      endsAt: '2026-01-01T04:00:00+01:00',
      repeatUnit: 'DAY',
      timezone: 'Europe/Berlin',
    });
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ startsAt: '2026-01-01T01:00:00.000Z', repeatInterval: null });
    const list = await svc.request('GET', '/v1/maintenance-windows?limit=1&page=2');
    expect(list.statusCode).toBe(200);
    expect(list.json().map((w: { name: string }) => w.name)).toEqual(['nightly']);
    // Account B sees none of A's windows.
    const other = await svc.request('GET', `/v1/maintenance-windows/${window.id}`, undefined, 'B');
    expect(other.statusCode).toBe(404);
    expect((await svc.request('GET', '/v1/maintenance-windows', undefined, 'B')).json()).toEqual([]);

    const updated = await svc.request('PUT', `/v1/maintenance-windows/${window.id}`, {
      ...sdkWindow,
      name: 'renamed',
      silenceAlerts: false,
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ name: 'renamed', silenceAlerts: false, repeatUnit: 'MONTH' });
    expect(updated.json().updated_at).toEqual(expect.any(String));
    // A partial update keeps what it leaves out.
    const partial = await svc.request('PUT', `/v1/maintenance-windows/${window.id}`, { tags: [] });
    expect(partial.json()).toMatchObject({ name: 'renamed', tags: [], repeatInterval: 10 });

    const deleted = await svc.request('DELETE', `/v1/maintenance-windows/${window.id}`);
    expect(deleted.statusCode).toBe(204);
    expect((await svc.request('GET', `/v1/maintenance-windows/${window.id}`)).statusCode).toBe(404);
    expect((await svc.request('DELETE', `/v1/maintenance-windows/${window.id}`)).statusCode).toBe(404);
  });

  it('says whether a window is on now and when it is on next', async () => {
    const now = Date.now();
    const on = await svc.request('POST', '/v1/maintenance-windows', {
      name: 'on',
      startsAt: new Date(now - hour).toISOString(),
      endsAt: new Date(now + hour).toISOString(),
    });
    expect(on.json()).toMatchObject({
      active: true,
      nextOccurrence: { startsAt: new Date(now - hour).toISOString() },
    });
    const weekly = await svc.request('POST', '/v1/maintenance-windows', {
      name: 'weekly',
      startsAt: new Date(now - 2 * hour).toISOString(),
      endsAt: new Date(now - hour).toISOString(),
      repeatUnit: 'WEEK',
    });
    expect(weekly.json()).toMatchObject({
      active: false,
      nextOccurrence: { startsAt: new Date(now - 2 * hour + 7 * 24 * hour).toISOString() },
    });
  });

  it('accepts a date for startsAt and endsAt: midnight in the window time zone', async () => {
    const res = await svc.request('POST', '/v1/maintenance-windows', {
      name: 'dates',
      startsAt: '2026-07-01',
      endsAt: '2026-07-02',
      timezone: 'Europe/Berlin',
      repeatUnit: 'DAY',
      repeatEndsAt: '2026-07-10',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      startsAt: '2026-06-30T22:00:00.000Z',
      endsAt: '2026-07-01T22:00:00.000Z',
      repeatEndsAt: '2026-07-10T00:00:00.000Z',
    });
    // A date-time without an offset (a form's date and time) is a wall time in the zone: summer time here.
    const local = await svc.request('POST', '/v1/maintenance-windows', {
      name: 'local',
      startsAt: '2026-03-30T02:00',
      endsAt: '2026-03-30T04:00',
      timezone: 'Europe/Berlin',
    });
    expect(local.statusCode, local.body).toBe(201);
    expect(local.json()).toMatchObject({
      startsAt: '2026-03-30T00:00:00.000Z',
      endsAt: '2026-03-30T02:00:00.000Z',
    });
  });

  it.each([
    ['repeatUnit not DAY, WEEK or MONTH', { repeatUnit: 'YEAR' }, 'repeatUnit'],
    ['endsAt before startsAt', { endsAt: '2014-08-23T23:59:59.000Z' }, 'endsAt'],
    ['an unknown field', { pauseEverything: true }, 'pauseEverything'],
    ['a startsAt that is no date', { startsAt: 'next tuesday' }, 'startsAt'],
    ['a startsAt on no day', { startsAt: '2026-02-30T10:00' }, 'startsAt'],
    ['a time zone that is an offset', { timezone: '+05:00' }, 'timezone'],
    ['a time zone nobody has', { timezone: 'Mars/Olympus_Mons' }, 'timezone'],
    ['repeatEndsAt before the first start', { repeatEndsAt: '2014-08-01' }, 'repeatEndsAt'],
    ['repeatInterval without repeatUnit', { repeatUnit: null, repeatInterval: 2 }, 'repeatUnit'],
    ['repeatInterval above 365', { repeatInterval: 366 }, 'repeatInterval'],
    ['an echoed id of the wrong type', { id: { nested: true } }, 'id'],
    ['a check of no one', { checkIds: ['00000000-0000-4000-8000-000000000000'] }, 'checkIds'],
    ['a group of no one', { groupIds: [12345] }, 'groupIds'],
  ])('answers 400 naming the field for %s', async (_, over, field) => {
    const res = await svc.request('POST', '/v1/maintenance-windows', { ...sdkWindow, ...over });
    expectBadField(res, field);
  });

  it('refuses a check of another account', async () => {
    const checkA = await createCheck(svc, 'icmp', icmpBody());
    const res = await svc.request(
      'POST',
      '/v1/maintenance-windows',
      { name: 'x', startsAt: '2026-01-01', endsAt: '2026-01-02', checkIds: [checkA] },
      'B',
    );
    expectBadField(res, 'checkIds');
    const mine = await svc.request('POST', '/v1/maintenance-windows', {
      name: 'x',
      startsAt: '2026-01-01',
      endsAt: '2026-01-02',
      checkIds: [checkA],
    });
    expect(mine.statusCode, mine.body).toBe(201);
    expect(mine.json().checkIds).toEqual([checkA]);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/maintenance-windows', '/v1/maintenance-windows/{id}']),
    );
  });
});
