/**
 * The machine-readable views of a status page (docs/status-pages.md, "Feeds and JSON"): RSS and Atom feeds
 * (parsed by a feed reader's parser and checked as XML), the Statuspage-compatible v2 JSON (field names and
 * value sets, a hand-checked MAJOR incident, maintenances), private pages (404 without the token, the same
 * bytes as an unknown page), the badge, custom domains, ETag/304 and HEAD. Incidents are made through /v1.
 */
import { parseFeed } from '@rowanmanning/feed-parser';
import type { LightMyRequestResponse } from 'fastify';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedToken } from '../../../src/service/status-pages/public/access.js';
import { BADGE_LABEL_COLOR, BADGE_STATES } from '../../../src/service/status-pages/public/badge.js';
import { findPageByUrl } from '../../../src/service/status-pages/public/page-queries.js';
import { renderFeed } from '../../../src/service/status-pages/public/feeds.js';
import { readIncidentFacts } from '../../../src/service/status-pages/public/page-queries.js';
import { buildPageModel } from '../../../src/service/status-pages/public/page-reader.js';
import {
  API_DOCUMENTS,
  incidentsShownBy,
  statuspageDocument,
} from '../../../src/service/status-pages/public/statuspage-api.js';
import { type TestService, testService } from '../../helpers/service.js';
import { seedStatusPage } from '../../helpers/status-pages.js';

let svc: TestService;
beforeAll(async () => {
  // The operator's allow-list makes the custom domains active without a TXT record.
  svc = await testService({ customDomains: { allowList: ['.example.com'] } });
});
afterAll(async () => svc.close());

const APP_URL = 'http://localhost:3000';
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let seq = 0;
const freshUrl = (stem = 'feeds') => `${stem}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

const get = (url: string, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url, headers });

/** Creates services and a page with one card per entry of `cards` (service names). */
async function makePage(cards: Record<string, string[]>, fields: Record<string, unknown> = {}) {
  const services: Record<string, string> = {};
  const cardBodies = [];
  for (const [cardName, names] of Object.entries(cards)) {
    const ids = [];
    for (const name of names) {
      if (!services[name]) {
        const res = await svc.request('POST', '/v1/status-pages/services', { name });
        expect(res.statusCode, res.body).toBe(201);
        services[name] = (res.json() as { id: string }).id;
      }
      ids.push({ id: services[name]! });
    }
    cardBodies.push({ name: cardName, services: ids });
  }
  const url = freshUrl();
  const res = await svc.request('POST', '/v1/status-pages', {
    name: 'Acme Status',
    url,
    cards: cardBodies,
    ...fields,
  });
  expect(res.statusCode, res.body).toBe(201);
  const page = res.json() as { id: string; url: string; keys: { id: string }[] };
  return { page, url, services, base: `/status/${url}` };
}

async function makeIncident(body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await svc.request('POST', '/v1/incidents', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}

async function addUpdate(incidentId: string, body: Record<string, unknown>) {
  const res = await svc.request('POST', `/v1/incidents/${incidentId}/updates`, body);
  expect(res.statusCode, res.body).toBe(201);
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  // Items and entries always as lists; links too in Atom (a feed and an entry have several).
  isArray: (name, jpath) =>
    name === 'item' || name === 'entry' || (name === 'link' && String(jpath).startsWith('feed.')),
});

/** A response as compared for byte identity: status, headers but Date, body. */
function wire(res: LightMyRequestResponse) {
  const { date: _date, ...headers } = res.headers;
  return { status: res.statusCode, headers, body: res.body };
}

const TRICKY = `Disk <full> & "slow" 'reads' ]]> twice ]]> &amp; done`;

describe('RSS and Atom feeds', () => {
  let ctx: Awaited<ReturnType<typeof makePage>>;
  let tricky: { id: string };
  let older: { id: string };
  beforeAll(async () => {
    ctx = await makePage({ Core: ['API', 'Web'] }, { description: 'Acme & co <status>' });
    const now = Date.now();
    // Older than 90 days: not in the feeds.
    await makeIncident({
      name: 'Ancient outage',
      impact: 'MAJOR',
      startedAt: new Date(now - 100 * DAY).toISOString(),
      stoppedAt: new Date(now - 99 * DAY).toISOString(),
      services: [{ id: ctx.services.API }],
      incidentUpdates: [{ status: 'RESOLVED', description: 'Long gone' }],
    });
    older = await makeIncident({
      name: 'Slow web pages',
      impact: 'MINOR',
      startedAt: new Date(now - 3 * DAY).toISOString(),
      services: [{ id: ctx.services.Web }],
      incidentUpdates: [
        {
          status: 'INVESTIGATING',
          description: 'Looking into it',
          publicIncidentUpdateDate: new Date(now - 3 * DAY).toISOString(),
        },
      ],
    });
    await addUpdate(older.id, {
      status: 'RESOLVED',
      description: 'Fixed',
      publicIncidentUpdateDate: new Date(now - 2 * DAY).toISOString(),
    });
    tricky = await makeIncident({
      name: TRICKY,
      impact: 'MAJOR',
      startedAt: new Date(now - HOUR).toISOString(),
      services: [{ id: ctx.services.API }],
      incidentUpdates: [
        {
          status: 'INVESTIGATING',
          description: 'Line one <script>alert(1)</script>\nline two ]]>',
          publicIncidentUpdateDate: new Date(now - HOUR).toISOString(),
        },
      ],
    });
    await addUpdate(tricky.id, { status: 'IDENTIFIED', description: 'Found the disk' });
  });

  it('writes RSS 2.0 that parses, with the required elements and the incidents newest first', async () => {
    const res = await get(`${ctx.base}/feed.rss`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/rss+xml; charset=utf-8');
    expect(XMLValidator.validate(res.body)).toBe(true);
    expect(res.body).not.toContain('<script>');

    const doc = xml.parse(res.body);
    const channel = doc.rss.channel;
    expect(doc.rss['@version']).toBe('2.0');
    expect(channel.title).toBe('Acme Status - Incident History');
    expect(channel.link).toBe(`${APP_URL}${ctx.base}`);
    expect(channel.description).toBe('Acme & co <status>');
    expect(channel['atom:link']['@href']).toBe(`${APP_URL}${ctx.base}/feed.rss`);
    expect(channel['atom:link']['@rel']).toBe('self');
    expect(channel.item).toHaveLength(2);
    for (const item of channel.item) expect(item.guid['#text']).toMatch(/^http:\/\/localhost:3000\/status\//);

    const feed = parseFeed(res.body);
    expect(feed.title).toBe('Acme Status - Incident History');
    expect(feed.items.map((i) => i.title)).toEqual([`${TRICKY} — Identified`, 'Slow web pages — Resolved']);
    const [first, second] = feed.items;
    expect(first!.url).toBe(`${APP_URL}${ctx.base}/incidents/${tricky.id}`);
    expect(first!.id).toBe(first!.url);
    expect(second!.url).toBe(`${APP_URL}${ctx.base}/incidents/${older.id}`);
    // Every update with its status, newest first; the text is escaped HTML.
    const description = first!.description!;
    expect(description.indexOf('Identified')).toBeLessThan(description.indexOf('Investigating'));
    expect(description).toContain('Found the disk');
    expect(description).toContain('Affected:</strong> API.');
    expect(res.body).toContain('Line one &lt;script&gt;alert(1)&lt;/script&gt;<br>line two ]]&gt;');
    // pubDate: the latest update (the RESOLVED one of two days ago for the older incident).
    expect(Math.abs(second!.published!.getTime() - (Date.now() - 2 * DAY))).toBeLessThan(60_000);
  });

  it('writes Atom 1.0 that parses, with feed and entry id, title, updated and the self link', async () => {
    const res = await get(`${ctx.base}/feed.atom`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    expect(XMLValidator.validate(res.body)).toBe(true);

    const doc = xml.parse(res.body).feed;
    expect(doc['@xmlns']).toBe('http://www.w3.org/2005/Atom');
    expect(doc.id).toBe(`${APP_URL}${ctx.base}`);
    expect(doc.title).toBe('Acme Status - Incident History');
    expect(doc.updated).toMatch(ISO_MS);
    expect(doc.author.name).toBe('Acme Status');
    const self = doc.link.find((l: Record<string, string>) => l['@rel'] === 'self');
    expect(self['@href']).toBe(`${APP_URL}${ctx.base}/feed.atom`);
    expect(doc.entry).toHaveLength(2);
    for (const entry of doc.entry) {
      expect(entry.id).toMatch(/^http:\/\/localhost:3000\/status\/.+\/incidents\//);
      expect(entry.title['#text'] ?? entry.title).toBeTruthy();
      expect(entry.updated).toMatch(ISO_MS);
    }

    const feed = parseFeed(res.body);
    expect(feed.items.map((i) => i.title)).toEqual([`${TRICKY} — Identified`, 'Slow web pages — Resolved']);
    expect(feed.items[0]!.id).toBe(`${APP_URL}${ctx.base}/incidents/${tricky.id}`);
    expect(feed.items[0]!.content).toContain('Found the disk');
    expect(feed.self).toBe(`${APP_URL}${ctx.base}/feed.atom`);
  });

  it('keeps a page name with markup and XML-forbidden characters well-formed and exact', async () => {
    const named = await makePage({ Core: ['Mail'] }, { name: 'R&amp;D <Ops> "team" \u0001 ]]>' });
    for (const format of ['rss', 'atom'] as const) {
      const res = await get(`${named.base}/feed.${format}`);
      expect(res.statusCode).toBe(200);
      expect(XMLValidator.validate(res.body)).toBe(true);
      const doc = xml.parse(res.body);
      const title = format === 'rss' ? doc.rss.channel.title : doc.feed.title;
      // A plain-text title, escaped once: the literal `&amp;` survives, the forbidden U+0001 is dropped.
      expect(title).toBe('R&amp;D <Ops> "team"  ]]> - Incident History');
    }
  });
});

/** Statuspage's v2 fields. */
const PAGE_FIELDS = ['id', 'name', 'url', 'time_zone', 'updated_at'];
const COMPONENT_FIELDS = [
  'id',
  'name',
  'status',
  'created_at',
  'updated_at',
  'position',
  'description',
  'showcase',
  'start_date',
  'group_id',
  'page_id',
  'group',
  'only_show_if_degraded',
];
const INCIDENT_FIELDS = [
  'id',
  'name',
  'status',
  'created_at',
  'updated_at',
  'monitoring_at',
  'resolved_at',
  'impact',
  'shortlink',
  'started_at',
  'page_id',
  'incident_updates',
  'components',
];
const UPDATE_FIELDS = [
  'id',
  'status',
  'body',
  'incident_id',
  'created_at',
  'updated_at',
  'display_at',
  'affected_components',
  'deliver_notifications',
  'custom_tweet',
  'tweet_id',
];
const COMPONENT_STATUSES = [
  'operational',
  'degraded_performance',
  'partial_outage',
  'major_outage',
  'under_maintenance',
];
const INCIDENT_STATUSES = ['investigating', 'identified', 'monitoring', 'resolved', 'postmortem'];
const MAINTENANCE_STATUSES = ['scheduled', 'in_progress', 'verifying', 'completed'];
const IMPACTS = ['none', 'minor', 'major', 'critical', 'maintenance'];

type Json = Record<string, any>;

function expectComponent(c: Json, pageId: string) {
  expect(Object.keys(c).sort()).toEqual(
    (c.group ? [...COMPONENT_FIELDS, 'components'] : COMPONENT_FIELDS).sort(),
  );
  expect(COMPONENT_STATUSES).toContain(c.status);
  expect(c.created_at).toMatch(ISO_MS);
  expect(c.updated_at).toMatch(ISO_MS);
  expect(c.page_id).toBe(pageId);
  expect(c.only_show_if_degraded).toBe(false);
  expect(Number.isInteger(c.position) && c.position >= 1).toBe(true);
  if (!c.group) expect(c.start_date).toMatch(/^\d{4}-\d\d-\d\d$/);
}

function expectIncident(i: Json, pageId: string, maintenance = false) {
  expect(Object.keys(i).sort()).toEqual(
    (maintenance ? [...INCIDENT_FIELDS, 'scheduled_for', 'scheduled_until'] : INCIDENT_FIELDS).sort(),
  );
  expect(maintenance ? MAINTENANCE_STATUSES : INCIDENT_STATUSES).toContain(i.status);
  expect(IMPACTS).toContain(i.impact);
  for (const f of ['created_at', 'updated_at', 'started_at']) expect(i[f]).toMatch(ISO_MS);
  for (const f of ['monitoring_at', 'resolved_at']) if (i[f] !== null) expect(i[f]).toMatch(ISO_MS);
  expect(i.page_id).toBe(pageId);
  for (const u of i.incident_updates) {
    expect(Object.keys(u).sort()).toEqual([...UPDATE_FIELDS].sort());
    expect(maintenance ? MAINTENANCE_STATUSES : INCIDENT_STATUSES).toContain(u.status);
    expect(u.incident_id).toBe(i.id);
    for (const f of ['created_at', 'updated_at', 'display_at']) expect(u[f]).toMatch(ISO_MS);
    expect(typeof u.deliver_notifications).toBe('boolean');
    expect(u.custom_tweet).toBeNull();
    expect(u.tweet_id).toBeNull();
    if (u.affected_components !== null) {
      for (const a of u.affected_components) {
        expect(Object.keys(a).sort()).toEqual(['code', 'name', 'new_status', 'old_status']);
        expect(COMPONENT_STATUSES).toContain(a.old_status);
        expect(COMPONENT_STATUSES).toContain(a.new_status);
      }
    }
  }
  for (const c of i.components) expectComponent(c, pageId);
}

describe('Statuspage v2 JSON', () => {
  it('answers summary.json with exactly Statuspage’s keys and fields; a MAJOR incident hand-checked', async () => {
    const ctx = await makePage({ Core: ['API', 'Web'], Edge: ['CDN', 'API'] });
    const pageId = ctx.page.id;
    const calm = (await get(`${ctx.base}/api/v2/summary.json`)).json() as Json;
    expect(calm.status).toEqual({ indicator: 'none', description: 'All Systems Operational' });
    expect(calm.incidents).toEqual([]);

    const incident = await makeIncident({
      name: 'API down',
      impact: 'MAJOR',
      services: [{ id: ctx.services.API }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'We are looking', notifySubscribers: true }],
    });
    const res = await get(`${ctx.base}/api/v2/summary.json`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('public, max-age=30, stale-while-revalidate=60');
    const summary = res.json() as Json;
    expect(Object.keys(summary).sort()).toEqual(
      ['components', 'incidents', 'page', 'scheduled_maintenances', 'status'].sort(),
    );
    expect(Object.keys(summary.page).sort()).toEqual([...PAGE_FIELDS].sort());
    expect(summary.page).toMatchObject({
      id: pageId,
      name: 'Acme Status',
      url: `${APP_URL}${ctx.base}`,
      time_zone: 'Etc/UTC',
    });
    expect(summary.page.updated_at).toMatch(ISO_MS);
    for (const c of summary.components) expectComponent(c, pageId);
    for (const i of summary.incidents) expectIncident(i, pageId);

    // Cards are groups; API (on both cards) is listed once, inside the first, and in both groups' lists.
    const names = summary.components.map((c: Json) => `${c.group ? 'group ' : ''}${c.name}`);
    expect(names).toEqual(['group Core', 'API', 'Web', 'group Edge', 'CDN']);
    const byName = Object.fromEntries(summary.components.map((c: Json) => [c.name, c]));
    expect(byName.Core).toMatchObject({ group: true, group_id: null, status: 'major_outage', position: 1 });
    expect(byName.Core.components).toEqual([ctx.services.API, ctx.services.Web]);
    expect(byName.Edge).toMatchObject({ group: true, status: 'major_outage', position: 2 });
    expect(byName.Edge.components).toEqual([ctx.services.CDN, ctx.services.API]);
    expect(byName.API).toMatchObject({
      group: false,
      group_id: byName.Core.id,
      status: 'major_outage',
      position: 1,
    });
    expect(byName.Web).toMatchObject({ group_id: byName.Core.id, status: 'operational', position: 2 });
    expect(byName.CDN).toMatchObject({ group_id: byName.Edge.id, status: 'operational', position: 1 });

    // MAJOR → major outage → indicator critical; the incident's impact by the same table.
    expect(summary.status).toEqual({ indicator: 'critical', description: 'Major System Outage' });
    expect(summary.incidents).toHaveLength(1);
    const sp = summary.incidents[0];
    expect(sp).toMatchObject({
      id: incident.id,
      name: 'API down',
      status: 'investigating',
      impact: 'critical',
      monitoring_at: null,
      resolved_at: null,
      shortlink: `${APP_URL}${ctx.base}/incidents/${incident.id}`,
    });
    expect(sp.components.map((c: Json) => c.id)).toEqual([ctx.services.API]);
    expect(sp.incident_updates).toHaveLength(1);
    expect(sp.incident_updates[0]).toMatchObject({
      status: 'investigating',
      body: 'We are looking',
      deliver_notifications: true,
      affected_components: [
        { code: ctx.services.API, name: 'API', old_status: 'operational', new_status: 'major_outage' },
      ],
    });
    expect(summary.scheduled_maintenances).toEqual([]);

    // Monitoring, then resolved: the lists and the indicator follow.
    await addUpdate(incident.id, { status: 'MONITORING', description: 'A fix is out' });
    const monitoring = (await get(`${ctx.base}/api/v2/incidents/unresolved.json`)).json() as Json;
    expect(Object.keys(monitoring).sort()).toEqual(['incidents', 'page']);
    expect(monitoring.incidents[0].status).toBe('monitoring');
    expect(monitoring.incidents[0].monitoring_at).toMatch(ISO_MS);
    expect(monitoring.incidents[0].incident_updates.map((u: Json) => u.status)).toEqual([
      'monitoring',
      'investigating',
    ]);
    expect(monitoring.incidents[0].incident_updates[0].affected_components).toBeNull();
    expect(monitoring.incidents[0].incident_updates[0].deliver_notifications).toBe(false);

    await addUpdate(incident.id, { status: 'RESOLVED', description: 'All good' });
    const unresolved = (await get(`${ctx.base}/api/v2/incidents/unresolved.json`)).json() as Json;
    expect(unresolved.incidents).toEqual([]);
    const all = (await get(`${ctx.base}/api/v2/incidents.json`)).json() as Json;
    expect(all.incidents).toHaveLength(1);
    expectIncident(all.incidents[0], pageId);
    expect(all.incidents[0].status).toBe('resolved');
    expect(all.incidents[0].resolved_at).toMatch(ISO_MS);
    expect(all.incidents[0].incident_updates[0].affected_components).toEqual([
      { code: ctx.services.API, name: 'API', old_status: 'major_outage', new_status: 'operational' },
    ]);
    const status = (await get(`${ctx.base}/api/v2/status.json`)).json() as Json;
    expect(status).toEqual({
      page: { ...summary.page, updated_at: status.page.updated_at },
      status: { indicator: 'none', description: 'All Systems Operational' },
    });
    const components = (await get(`${ctx.base}/api/v2/components.json`)).json() as Json;
    expect(Object.keys(components).sort()).toEqual(['components', 'page']);
    expect(components.components.every((c: Json) => c.status === 'operational')).toBe(true);
  });

  it('maps a MINOR incident to partial outage (indicator major)', async () => {
    const ctx = await makePage({ Core: ['Queue'] });
    await makeIncident({
      name: 'Queue slow',
      impact: 'MINOR',
      services: [{ id: ctx.services.Queue }],
      incidentUpdates: [{ status: 'IDENTIFIED', description: 'Backlog' }],
    });
    const summary = (await get(`${ctx.base}/api/v2/summary.json`)).json() as Json;
    expect(summary.status).toEqual({ indicator: 'major', description: 'Partial System Outage' });
    expect(summary.components[1].status).toBe('partial_outage');
    expect(summary.incidents[0]).toMatchObject({ status: 'identified', impact: 'major' });
  });

  it('lists MAINTENANCE incidents as scheduled maintenances, not incidents', async () => {
    const ctx = await makePage({ Core: ['DB'] });
    const pageId = ctx.page.id;
    const now = Date.now();
    const from = new Date(now + 2 * HOUR).toISOString();
    const until = new Date(now + 4 * HOUR).toISOString();
    const upcoming = await makeIncident({
      name: 'DB upgrade',
      impact: 'MAINTENANCE',
      startedAt: from,
      stoppedAt: until,
      services: [{ id: ctx.services.DB }],
      incidentUpdates: [
        {
          status: 'MAINTENANCE',
          description: 'Planned',
          publicIncidentUpdateDate: new Date(now - 1000).toISOString(),
        },
      ],
    });
    let summary = (await get(`${ctx.base}/api/v2/summary.json`)).json() as Json;
    expect(summary.incidents).toEqual([]);
    expect(summary.status.indicator).toBe('none');
    expect(summary.scheduled_maintenances).toHaveLength(1);
    const m = summary.scheduled_maintenances[0];
    expectIncident(m, pageId, true);
    expect(m).toMatchObject({
      id: upcoming.id,
      status: 'scheduled',
      impact: 'maintenance',
      scheduled_for: from,
      scheduled_until: until,
    });
    expect(m.incident_updates[0].status).toBe('scheduled');
    expect(
      ((await get(`${ctx.base}/api/v2/scheduled-maintenances/upcoming.json`)).json() as Json)
        .scheduled_maintenances,
    ).toHaveLength(1);
    expect(
      ((await get(`${ctx.base}/api/v2/scheduled-maintenances/active.json`)).json() as Json)
        .scheduled_maintenances,
    ).toEqual([]);

    const running = await makeIncident({
      name: 'Disk swap',
      impact: 'MAINTENANCE',
      startedAt: new Date(now - HOUR).toISOString(),
      stoppedAt: new Date(now + HOUR).toISOString(),
      services: [{ id: ctx.services.DB }],
      incidentUpdates: [{ status: 'MAINTENANCE', description: 'Swapping' }],
    });
    summary = (await get(`${ctx.base}/api/v2/summary.json`)).json() as Json;
    expect(summary.status).toEqual({ indicator: 'maintenance', description: 'Service Under Maintenance' });
    expect(summary.components[1].status).toBe('under_maintenance');
    const active = (await get(`${ctx.base}/api/v2/scheduled-maintenances/active.json`)).json() as Json;
    expect(active.scheduled_maintenances.map((x: Json) => [x.id, x.status])).toEqual([
      [running.id, 'in_progress'],
    ]);
    const listed = (await get(`${ctx.base}/api/v2/scheduled-maintenances.json`)).json() as Json;
    expect(listed.scheduled_maintenances.map((x: Json) => x.id).sort()).toEqual(
      [upcoming.id, running.id].sort(),
    );
    for (const x of listed.scheduled_maintenances) expectIncident(x, pageId, true);
    expect(((await get(`${ctx.base}/api/v2/incidents.json`)).json() as Json).incidents).toEqual([]);
  });
});

describe('private pages', () => {
  it('answers every machine route with the unknown page’s 404 without the token, and works with it', async () => {
    const ctx = await makePage({ Core: ['Secret service'] }, { isPrivate: true });
    await makeIncident({
      name: 'Hidden incident',
      impact: 'MAJOR',
      services: [{ id: ctx.services['Secret service'] }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'Hidden text' }],
    });
    const page = (await findPageByUrl(svc.context.db, ctx.url))!;
    const token = feedToken(svc.context, page, ctx.page.keys[0]!.id);
    const nobody = `/status/${freshUrl('nobody')}`;
    const paths = ['feed.rss', 'feed.atom', 'badge.svg', ...API_DOCUMENTS.map((d) => `api/v2/${d}`)];
    for (const path of paths) {
      const unknown = await get(`${nobody}/${path}`);
      const hidden = await get(`${ctx.base}/${path}`);
      expect(hidden.statusCode, path).toBe(404);
      expect(wire(hidden), path).toEqual(wire(unknown));
      const forged = await get(`${ctx.base}/${path}?token=${ctx.page.keys[0]!.id}.AAAA`);
      expect(wire(forged), path).toEqual(wire(unknown));

      const open = await get(`${ctx.base}/${path}?token=${encodeURIComponent(token)}`);
      expect(open.statusCode, path).toBe(200);
      expect(open.headers['cache-control'], path).toBe('private, no-store');
      expect(open.headers['access-control-allow-origin'], path).toBeUndefined();
      expect(open.headers['referrer-policy'], path).toBe('no-referrer');
    }
    const rss = await get(`${ctx.base}/feed.rss?token=${encodeURIComponent(token)}`);
    const channel = xml.parse(rss.body).rss.channel;
    // The token stays in the feed's own link, never in incident links.
    expect(channel['atom:link']['@href']).toBe(
      `${APP_URL}${ctx.base}/feed.rss?token=${encodeURIComponent(token)}`,
    );
    expect(channel.item[0].link).not.toContain('token');
    expect(channel.item[0].title).toBe('Hidden incident — Investigating');
    const summary = (
      await get(`${ctx.base}/api/v2/summary.json?token=${encodeURIComponent(token)}`)
    ).json() as Json;
    expect(summary.incidents[0].name).toBe('Hidden incident');
    expect(JSON.stringify(summary)).not.toContain('token');
  });
});

/** WCAG relative luminance of `#RRGGBB`. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
const contrastWithWhite = (hex: string) => 1.05 / (luminance(hex) + 0.05);

describe('the badge', () => {
  it('is a valid SVG that says the state in words, with a title', async () => {
    const ctx = await makePage({ Core: ['Billing'] });
    const calm = await get(`${ctx.base}/badge.svg`);
    expect(calm.statusCode).toBe(200);
    expect(calm.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(calm.headers['cache-control']).toBe('public, max-age=60');
    expect(XMLValidator.validate(calm.body)).toBe(true);
    const svg = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' }).parse(calm.body).svg;
    expect(svg['@xmlns']).toBe('http://www.w3.org/2000/svg');
    expect(svg['@role']).toBe('img');
    expect(svg.title).toBe('Acme Status status: operational');
    expect(svg['@aria-label']).toBe('Acme Status status: operational');
    expect(svg.g[1].text.map((t: Json) => t['#text'])).toEqual(['status', 'operational']);

    await makeIncident({
      name: 'Billing down',
      impact: 'MAJOR',
      services: [{ id: ctx.services.Billing }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }],
    });
    const down = await get(`${ctx.base}/badge.svg`);
    expect(down.body).toContain('>major outage</text>');
    expect(down.body).toContain('<title>Acme Status status: major outage</title>');
  });

  it('escapes the page name and keeps white text at 4.5:1 on every colour', async () => {
    const ctx = await makePage({ Core: ['Mail'] }, { name: '<Acme> & "Co"' });
    const res = await get(`${ctx.base}/badge.svg`);
    expect(XMLValidator.validate(res.body)).toBe(true);
    expect(res.body).toContain('<title>&lt;Acme&gt; &amp; &quot;Co&quot; status: operational</title>');
    for (const color of [BADGE_LABEL_COLOR, ...Object.values(BADGE_STATES).map((s) => s.color)]) {
      expect(contrastWithWhite(color), color).toBeGreaterThanOrEqual(4.5);
    }
  });
});

describe('caching, HEAD and custom domains', () => {
  it('answers 304 to a matching If-None-Match; the ETag changes with an incident update', async () => {
    const ctx = await makePage({ Core: ['API'] });
    const incident = await makeIncident({
      name: 'Errors',
      impact: 'MINOR',
      services: [{ id: ctx.services.API }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }],
    });
    for (const path of ['feed.rss', 'feed.atom', 'badge.svg', 'api/v2/summary.json']) {
      const first = await get(`${ctx.base}/${path}`);
      const etag = first.headers.etag as string;
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]+"$/);
      const again = await get(`${ctx.base}/${path}`);
      expect(again.body).toBe(first.body);
      expect(again.headers.etag).toBe(etag);
      const cached = await get(`${ctx.base}/${path}`, { 'if-none-match': etag });
      expect(cached.statusCode, path).toBe(304);
      expect(cached.body).toBe('');
      expect(cached.headers.etag).toBe(etag);
      const head = await svc.app.inject({ method: 'HEAD', url: `${ctx.base}/${path}` });
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      expect(head.headers.etag).toBe(etag);
      expect(head.headers['content-type']).toBe(first.headers['content-type']);
    }
    const before = (await get(`${ctx.base}/api/v2/summary.json`)).headers.etag as string;
    await addUpdate(incident.id, { status: 'IDENTIFIED', description: 'Found it' });
    const after = await get(`${ctx.base}/api/v2/summary.json`, { 'if-none-match': before });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(before);
    expect((after.json() as Json).incidents[0].status).toBe('identified');
  });

  it('makes absolute links from the custom domain when served there', async () => {
    const domain = `status-${++seq}.example.com`;
    const ctx = await makePage({ Core: ['API'] }, { customDomain: domain });
    const incident = await makeIncident({
      name: 'Custom',
      impact: 'MINOR',
      services: [{ id: ctx.services.API }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }],
    });
    const rss = await svc.app.inject({ url: '/feed.rss', headers: { host: domain } });
    expect(rss.statusCode).toBe(200);
    const channel = xml.parse(rss.body).rss.channel;
    expect(channel.link).toBe(`https://${domain}/`);
    expect(channel['atom:link']['@href']).toBe(`https://${domain}/feed.rss`);
    expect(channel.item[0].link).toBe(`https://${domain}/incidents/${incident.id}`);
    const summary = (
      await svc.app.inject({ url: '/api/v2/summary.json', headers: { host: domain } })
    ).json() as Json;
    expect(summary.page.url).toBe(`https://${domain}`);
    expect(summary.incidents[0].shortlink).toBe(`https://${domain}/incidents/${incident.id}`);
    // The same page under the app URL links there.
    const viaApp = (await get(`${ctx.base}/api/v2/summary.json`)).json() as Json;
    expect(viaApp.page.url).toBe(`${APP_URL}${ctx.base}`);
  });
});

describe('a large page', () => {
  it('renders the feeds and every JSON document of 50 services × 90 days quickly and validly', async () => {
    const api = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => {
      const res = await svc.request(method, path, body);
      return { status: res.statusCode, json: res.body ? res.json() : null };
    };
    const seeded = await seedStatusPage(api, { url: freshUrl('large'), db: svc.context.db });
    const page = (await findPageByUrl(svc.context.db, seeded.url))!;
    const model = await buildPageModel(svc.context.db, page, Date.now());
    expect(model.incidents.length).toBeGreaterThan(20);
    const links = { origin: APP_URL, basePath: `/status/${seeded.url}`, feedQuery: '' };
    const times: number[] = [];
    const sizes: Record<string, number> = {};
    for (let round = 0; round < 5; round++) {
      const t0 = performance.now();
      for (const format of ['rss', 'atom'] as const) sizes[format] = renderFeed(model, format, links).length;
      for (const document of API_DOCUMENTS) {
        const ids = incidentsShownBy(model, document).map((i) => i.id);
        const facts = await readIncidentFacts(svc.context.db, page.accountId, ids);
        const json = JSON.stringify(
          statuspageDocument(model, document, { pageUrl: `${APP_URL}${links.basePath}` }, facts),
        );
        sizes[document] = json.length;
      }
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const median = times[2]!;
    console.log(
      `feeds and JSON of ${model.incidents.length} incidents, 50 services: all 10 documents in ${median.toFixed(1)} ms (median of 5); sizes ${JSON.stringify(sizes)}`,
    );
    expect(median).toBeLessThan(250);

    const rss = await get(`/status/${seeded.url}/feed.rss`);
    expect(XMLValidator.validate(rss.body)).toBe(true);
    expect(parseFeed(rss.body).items).toHaveLength(model.incidents.length);
    const summary = (await get(`/status/${seeded.url}/api/v2/summary.json`)).json() as Json;
    expect(summary.components).toHaveLength(55);
    for (const c of summary.components) expectComponent(c, page.id);
    for (const i of summary.incidents) expectIncident(i, page.id);
    for (const m of summary.scheduled_maintenances) expectIncident(m, page.id, true);
    const all = (await get(`/status/${seeded.url}/api/v2/incidents.json`)).json() as Json;
    expect(all.incidents.length).toBe(
      Math.min(50, model.incidents.filter((i) => i.impact !== 'MAINTENANCE').length),
    );
    for (const i of all.incidents) expectIncident(i, page.id);
  });
});
