import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backdateServices } from '../../helpers/status-pages.js';
import { createCheck, type TestService, testService } from '../../helpers/service.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let svc: TestService;
beforeEach(async () => {
  svc = await testService();
});
afterEach(async () => svc.close());

async function service(name: string, account: 'A' | 'B' = 'A'): Promise<string> {
  const res = await svc.request('POST', '/v1/status-pages/services', { name }, account);
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().id as string;
  await backdateServices(svc.context.db, [id], Date.now() - 100 * DAY);
  return id;
}

async function page(url: string, serviceIds: string[], account: 'A' | 'B' = 'A'): Promise<void> {
  const res = await svc.request(
    'POST',
    '/v1/status-pages',
    { name: 'Acme status', url, cards: [{ name: 'Shop', services: serviceIds.map((id) => ({ id })) }] },
    account,
  );
  expect(res.statusCode, res.body).toBe(201);
}

/** A URL check linked to `serviceId` (its `triggerIncident`), with `tags`. */
async function linkedCheck(name: string, serviceId: string, tags: string[], account: 'A' | 'B' = 'A') {
  const res = await svc.request(
    'POST',
    '/v1/checks/url',
    {
      name,
      activated: true,
      tags,
      request: { url: 'https://shop.example.test/', assertions: [] },
      triggerIncident: {
        serviceId,
        severity: 'MAJOR',
        name: `${name} is down`,
        description: 'Looking into it.',
        notifySubscribers: false,
      },
    },
    account,
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function window(body: Record<string, unknown>, account: 'A' | 'B' = 'A'): Promise<number> {
  const res = await svc.request('POST', '/v1/maintenance-windows', body, account);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const html = async (url: string) => {
  const res = await svc.app.inject({ method: 'GET', url: `/status/${url}` });
  expect(res.statusCode).toBe(200);
  return res.body;
};

describe('maintenance on public status pages', () => {
  it('lists the window in progress over the services its checks watch, and puts them under maintenance', async () => {
    const [shop, api] = [await service('Shop'), await service('API')];
    await page('acme', [shop, api]);
    await linkedCheck('shop', shop, ['db']);
    await linkedCheck('api', api, ['edge']);
    const before = await html('acme');
    expect(before).not.toContain('Scheduled maintenance');

    const now = Date.now();
    await window({
      name: 'Database upgrade',
      description: 'New disks <script>alert(1)</script>',
      startsAt: iso(now - HOUR),
      endsAt: iso(now + HOUR),
      tags: ['db'],
    });
    // Account B's window with the same tag, and its name, never reach A's page.
    await window(
      { name: 'B-private-window-name', startsAt: iso(now - HOUR), endsAt: iso(now + HOUR), tags: ['db'] },
      'B',
    );
    // A window covering no linked check is not shown.
    await createCheck(svc, 'icmp', {
      name: 'unlinked',
      tags: ['cache'],
      request: { hostname: '127.0.0.1' },
      heartbeat: {},
      script: '',
    });
    await window({
      name: 'Cache flush',
      startsAt: iso(now - HOUR),
      endsAt: iso(now + HOUR),
      tags: ['cache'],
    });

    const after = await html('acme');
    expect(after).toContain('<h2 id="maintenance">Scheduled maintenance</h2>');
    expect(after).toContain('<h3>Database upgrade</h3>');
    expect(after).toContain('In progress, until');
    expect(after).toContain('affects Shop');
    expect(after).not.toContain('affects Shop, API');
    expect(after).toContain('New disks &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(after).not.toContain('<script>alert(1)');
    expect(after).not.toContain('B-private-window-name');
    expect(after).not.toContain('Cache flush');
    // Shop is under maintenance, API operational; the banner says so.
    expect(after).toMatch(/<h3>Shop<\/h3><span class="state s-under_maintenance">/);
    expect(after).toMatch(/<h3>API<\/h3><span class="state s-operational">/);
    expect(after).toContain('Maintenance in progress');
  });

  it('shows the next occurrence within a week, not later ones', async () => {
    const shop = await service('Shop');
    await page('acme-next', [shop]);
    const checkId = await linkedCheck('shop', shop, []);
    const now = Date.now();
    await window({
      name: 'Far away',
      startsAt: iso(now + 10 * DAY),
      endsAt: iso(now + 10 * DAY + HOUR),
      checkIds: [checkId],
    });
    expect(await html('acme-next')).not.toContain('Scheduled maintenance');
    await window({
      name: 'Weekly restart',
      startsAt: iso(now - 5 * DAY - HOUR),
      endsAt: iso(now - 5 * DAY),
      repeatUnit: 'WEEK',
      checkIds: [checkId],
    });
    const body = await html('acme-next');
    expect(body).toContain('<h3>Weekly restart</h3>');
    expect(body).not.toContain('In progress');
    expect(body).toContain(`<time datetime="${iso(now + 2 * DAY - HOUR)}">`);
    expect(body).not.toContain('Far away');
    expect(body).toMatch(/<h3>Shop<\/h3><span class="state s-operational">/);
  });
});
