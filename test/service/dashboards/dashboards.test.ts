import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBadField, type TestService, testService } from '../../helpers/service.js';

// `/v1/dashboards` (docs/api.md, "Dashboards"): create with the hosted API's defaults, read, list, update
// (fields left out keep their value), delete; the body the hosted API's Go SDK marshals (zero values, empty
// `created_at`) and an answer sent back whole are accepted; bad and unknown fields are refused naming them;
// a customUrl is unique across accounts; one account never sees another's dashboards.

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const req: TestService['request'] = (...args) => svc.request(...args);

/** The Go SDK's `testDashboard` as `json.Marshal` writes it (omitempty fields left out, the rest zero). */
const SDK_BODY = {
  customUrl: 'status-page',
  customDomain: 'is.checkly.online',
  logo: 'https://www.checklyhq.com/images/text_racoon_logo.svg',
  link: 'https://www.checklyhq.com',
  description: 'Checkly status page',
  favicon: 'https://www.checklyhq.com/images/text_racoon_logo.svg',
  header: 'Status',
  showHeader: true,
  width: 'FULL',
  refreshRate: 60,
  checksPerPage: 15,
  paginationRate: 30,
  paginate: true,
  tags: ['api'],
  useTagsAndOperator: true,
  enableIncidents: true,
  expandChecks: false,
  showCheckRunLinks: false,
  customCSS: '',
  showP95: true,
  showP99: true,
  created_at: '',
  updated_at: '',
};

async function countDashboards(): Promise<number> {
  return (await svc.context.db.selectFrom('dashboards').select('id').execute()).length;
}

describe('POST /v1/dashboards', () => {
  it('creates a dashboard with the defaults and answers it whole', async () => {
    const res = await req('POST', '/v1/dashboards', { header: 'Ops' });
    expect(res.statusCode, res.body).toBe(201);
    const dashboard = res.json();
    expect(dashboard).toEqual({
      id: expect.any(Number),
      dashboardId: expect.stringMatching(/^[0-9a-f]{16}$/),
      customUrl: null,
      customDomain: null,
      logo: null,
      favicon: null,
      link: null,
      header: 'Ops',
      description: null,
      width: 'FULL',
      refreshRate: 60,
      paginate: true,
      paginationRate: 60,
      sortByStatus: false,
      checksPerPage: 15,
      useTagsAndOperator: false,
      hideTags: false,
      enableIncidents: false,
      expandChecks: false,
      tags: [],
      showHeader: true,
      showCheckRunLinks: false,
      showGroupNames: true,
      customCSS: '',
      isPrivate: false,
      showP95: true,
      showP99: true,
      keys: [],
      created_at: expect.any(String),
      updated_at: null,
    });
    expect(new Date(dashboard.created_at).toISOString()).toBe(dashboard.created_at);
    const got = await req('GET', `/v1/dashboards/${dashboard.dashboardId}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(dashboard);
  });

  it("accepts the Go SDK's body and answers every field as sent (updated_at null)", async () => {
    const res = await req('POST', '/v1/dashboards', SDK_BODY);
    expect(res.statusCode, res.body).toBe(201);
    const { created_at: _c, updated_at: _u, ...sent } = SDK_BODY;
    expect(res.json()).toMatchObject({ ...sent, updated_at: null });
    await req('DELETE', `/v1/dashboards/${res.json().dashboardId}`);
  });

  it('accepts an answer sent back whole as an update', async () => {
    const created = (await req('POST', '/v1/dashboards', { header: 'Echo', tags: ['a'] })).json();
    const res = await req('PUT', `/v1/dashboards/${created.dashboardId}`, { ...created, header: 'Echoed' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      id: created.id,
      dashboardId: created.dashboardId,
      header: 'Echoed',
      tags: ['a'],
    });
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing header', { header: undefined }, 'header'],
    ['header as number', { header: 1 }, 'header'],
    ['width 800PX', { width: '800PX' }, 'width'],
    ['checksPerPage 21', { checksPerPage: 21 }, 'checksPerPage'],
    ['checksPerPage 0', { checksPerPage: 0 }, 'checksPerPage'],
    ['refreshRate -1', { refreshRate: -1 }, 'refreshRate'],
    ['paginationRate 3601', { paginationRate: 3601 }, 'paginationRate'],
    ['a javascript: logo', { logo: 'javascript:alert(1)' }, 'logo'],
    ['a link with a quote', { link: 'https://x.test/"onmouseover=x' }, 'link'],
    ['customUrl with a slash', { customUrl: 'a/b' }, 'customUrl'],
    ['customUrl of 64 characters', { customUrl: 'a'.repeat(64) }, 'customUrl'],
    ['customDomain without a dot', { customDomain: 'localhost' }, 'customDomain'],
    ['tags not a list', { tags: 'api' }, 'tags'],
    ['an empty tag', { tags: [''] }, 'tags[0]'],
    ['isPrivate as a string', { isPrivate: 'yes' }, 'isPrivate'],
    ['created_at as a number', { created_at: 5 }, 'created_at'],
    ['unknown field', { theme: 'dark' }, 'theme'],
  ];
  it.each(invalid)('rejects %s with 400 naming the field and writes nothing', async (_name, over, field) => {
    const before = await countDashboards();
    const res = await req('POST', '/v1/dashboards', { header: 'H', ...over });
    expectBadField(res, field);
    expect(await countDashboards()).toBe(before);
  });

  it('refuses a customUrl another dashboard of any account has (any case), naming customUrl', async () => {
    const a = await req('POST', '/v1/dashboards', { header: 'A', customUrl: 'shared-board' });
    expect(a.statusCode, a.body).toBe(201);
    const b = await req('POST', '/v1/dashboards', { header: 'B', customUrl: 'Shared-Board' }, 'B');
    expectBadField(b, 'customUrl');
    expect(b.json().message).toMatch(/already used/);
    // Its own url stays its own on update; another's is refused on update too.
    const again = await req('PUT', `/v1/dashboards/${a.json().dashboardId}`, { customUrl: 'shared-board' });
    expect(again.statusCode, again.body).toBe(200);
    const other = (await req('POST', '/v1/dashboards', { header: 'B2', customUrl: 'b-board' }, 'B')).json();
    expectBadField(
      await req('PUT', `/v1/dashboards/${other.dashboardId}`, { customUrl: 'shared-board' }, 'B'),
      'customUrl',
    );
    // An empty customUrl is none, and any number of dashboards have none.
    for (const header of ['E1', 'E2']) {
      const none = await req('POST', '/v1/dashboards', { header, customUrl: '' });
      expect(none.statusCode, none.body).toBe(201);
      expect(none.json().customUrl).toBeNull();
    }
  });
});

describe('GET, PUT and DELETE /v1/dashboards/{dashboardId}', () => {
  it('updates only the fields sent, sets updated_at, and deletes', async () => {
    const created = (
      await req('POST', '/v1/dashboards', { header: 'Before', tags: ['x'], description: 'kept' })
    ).json();
    const res = await req('PUT', `/v1/dashboards/${created.dashboardId}`, {
      header: 'After',
      width: '960PX',
    });
    expect(res.statusCode, res.body).toBe(200);
    const updated = res.json();
    expect(updated).toMatchObject({ header: 'After', width: '960PX', tags: ['x'], description: 'kept' });
    expect(updated.updated_at).toEqual(expect.any(String));
    expectBadField(await req('PUT', `/v1/dashboards/${created.dashboardId}`, { width: 'HALF' }), 'width');
    expect((await req('DELETE', `/v1/dashboards/${created.dashboardId}`)).statusCode).toBe(204);
    expect((await req('GET', `/v1/dashboards/${created.dashboardId}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/v1/dashboards/${created.dashboardId}`)).statusCode).toBe(404);
  });

  it("never shows, changes or deletes another account's dashboard", async () => {
    const created = (await req('POST', '/v1/dashboards', { header: 'Mine' })).json();
    const path = `/v1/dashboards/${created.dashboardId}`;
    expect((await req('GET', path, undefined, 'B')).statusCode).toBe(404);
    expect((await req('PUT', path, { header: 'Theirs' }, 'B')).statusCode).toBe(404);
    expect((await req('DELETE', path, undefined, 'B')).statusCode).toBe(404);
    const listB = (await req('GET', '/v1/dashboards?limit=100', undefined, 'B')).json() as {
      dashboardId: string;
    }[];
    expect(listB.map((d) => d.dashboardId)).not.toContain(created.dashboardId);
    expect((await req('GET', path)).json().header).toBe('Mine');
  });

  it("lists pages of the account's dashboards, oldest first", async () => {
    const local = await testService();
    try {
      const ids: string[] = [];
      for (const header of ['one', 'two', 'three']) {
        const res = await local.request('POST', '/v1/dashboards', { header });
        ids.push(res.json().dashboardId);
      }
      const list = async (q: string) =>
        ((await local.request('GET', `/v1/dashboards${q}`)).json() as { dashboardId: string }[]).map(
          (d) => d.dashboardId,
        );
      expect(await list('')).toEqual(ids);
      expect(await list('?limit=2&page=2')).toEqual([ids[2]]);
      expectBadField(await local.request('GET', '/v1/dashboards?limit=101'), 'limit', 'querystring');
    } finally {
      await local.close();
    }
  });
});
