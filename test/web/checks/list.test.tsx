import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import ChecksList from '../../../app/src/checks/list/page.js';
import { type Received, renderRoute, serveApi } from '../dom.js';
import { choose } from '../forms.js';

// The checks list in a real DOM against a loopback API: the table with each check's status, last result
// and availability; the summary counts; the filters (search, type, status, tag, group) and the sort kept in
// the address; and what it says with no check, no match or statuses that could not be loaded.

function check(fields: Record<string, unknown> = {}) {
  return {
    id: 'chk-a',
    name: 'Alpha API',
    checkType: 'API',
    activated: true,
    muted: false,
    groupId: null,
    tags: [],
    frequency: 5,
    frequencyOffset: null,
    locations: ['us-east-1'],
    privateLocations: [],
    runParallel: false,
    updated_at: null,
    ...fields,
  };
}

function status(checkId: string, fields: Record<string, unknown> = {}) {
  return {
    checkId,
    name: checkId,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    longestRun: 120,
    shortestRun: 100,
    lastRunAt: '2026-03-01T10:00:00.000Z',
    lastResultId: `res-${checkId}`,
    availability24h: 100,
    responseTimes24h: [100, 120, 110],
    ...fields,
  };
}

const CHECKS = [
  check({ id: 'chk-a', name: 'Alpha API', tags: ['api', 'prod'], groupId: 3 }),
  check({ id: 'chk-b', name: 'beta site', checkType: 'URL', tags: ['web'] }),
  check({ id: 'chk-c', name: 'Charlie DNS', checkType: 'DNS', tags: ['prod'], groupId: 3 }),
  check({ id: 'chk-d', name: 'Delta port', checkType: 'TCP', activated: false }),
];

const STATUSES = [
  status('chk-a', { hasFailures: true, availability24h: 80, lastRunAt: '2026-03-01T09:00:00.000Z' }),
  status('chk-b', { availability24h: 99.5, lastRunAt: '2026-03-01T10:30:00.000Z' }),
  status('chk-c', { isDegraded: true, availability24h: 95 }),
  status('chk-d', { lastRunAt: null, lastResultId: null, availability24h: null, responseTimes24h: [] }),
];

/** `GET /v1/checks` as the service answers it: every check of `all`, or the first `limit` (oldest first). */
function checksOf(all: unknown[]) {
  return (request: Received) => {
    const limit = request.query.get('limit');
    return { status: 200, body: limit ? all.slice(0, Number(limit)) : all };
  };
}

/** `GET /v1/check-statuses` as the service answers it: every status of `all`, or those `checkId` names. */
function statusesOf(all: { checkId: string }[]) {
  return (request: Received) => {
    const ids = request.query.get('checkId')?.split(',');
    return { status: 200, body: ids ? all.filter((s) => ids.includes(s.checkId)) : all };
  };
}

const api = serveApi(() => ({
  'GET /v1/checks': checksOf(CHECKS),
  'GET /v1/check-statuses': statusesOf(STATUSES),
  'GET /v1/check-groups': { status: 200, body: [{ id: 3, name: 'Shop' }] },
}));

function renderAt(path: string) {
  return renderRoute(path, <ChecksList />);
}

/** The names of the rows of the table, in order. */
function shownNames(): string[] {
  const table = screen.getByRole('table');
  return within(table)
    .getAllByRole('row')
    .slice(1)
    .map((row) => within(row).getAllByRole('link')[0]!.textContent ?? '');
}

const query = () => Object.fromEntries(new URLSearchParams(window.location.search));

describe('the table', () => {
  it('shows every check, failing first, with its status, last result, availability, group and tags', async () => {
    renderAt('/checks');
    await screen.findByRole('table');
    expect(shownNames()).toEqual(['Alpha API', 'Charlie DNS', 'beta site', 'Delta port']);
    expect(screen.getByRole('status').textContent).toBe('4 of 4 checks');
    const alpha = screen.getAllByRole('row')[1]!;
    expect(alpha.textContent).toContain('API');
    expect(alpha.textContent).toContain('Shop');
    expect(alpha.textContent).toContain('80');
    expect(within(alpha).getByRole('link', { name: 'Alpha API' }).getAttribute('href')).toBe('/checks/chk-a');
    expect(alpha.querySelector('a[href="/checks/chk-a/results/res-chk-a"]')).not.toBeNull();
    expect(within(alpha).getByRole('list').textContent).toBe('apiprod');
    const delta = screen.getAllByRole('row')[4]!;
    expect(delta.textContent).toContain('never');
    expect(screen.getByRole('table').querySelector('caption')?.textContent).toBe(
      'Checks, sorted by status ascending',
    );
  });

  it('counts the checks of each status, each count a link to its filter', async () => {
    renderAt('/checks');
    await screen.findByRole('table');
    const summary = screen.getByRole('link', { name: '1 failing' });
    expect(summary.getAttribute('href')).toBe('/checks?status=failing');
    expect(screen.getByRole('link', { name: '1 degraded' })).toBeTruthy();
    expect(screen.getByRole('link', { name: '1 passing' })).toBeTruthy();
    expect(screen.getByRole('link', { name: '1 paused' })).toBeTruthy();
  });

  it('says the status is unknown when the statuses could not be loaded', async () => {
    api.route({
      'GET /v1/check-statuses': {
        status: 500,
        body: { statusCode: 500, error: 'Internal Server Error', message: 'boom' },
      },
    });
    renderAt('/checks');
    await screen.findByText('The status of the checks could not be loaded');
    expect(screen.getByText('No status to summarize.')).toBeTruthy();
    const beta = screen.getAllByRole('row').find((r) => r.textContent?.includes('beta site'))!;
    expect(within(beta).getAllByText('unknown').length).toBeGreaterThan(0);
  });

  it('offers a form of each type when there is no check', async () => {
    api.route({ 'GET /v1/checks': { status: 200, body: [] } });
    renderAt('/checks');
    await screen.findByRole('heading', { name: 'No checks yet' });
    expect(screen.getAllByRole('link').some((a) => a.getAttribute('href') === '/checks/new?type=API')).toBe(
      true,
    );
  });
});

describe('filters', () => {
  it('searches by name, keeping the search in the address', async () => {
    renderAt('/checks');
    await screen.findByRole('table');
    fireEvent.input(screen.getByLabelText('Search by name'), { target: { value: 'BETA' } });
    await waitFor(() => expect(shownNames()).toEqual(['beta site']));
    expect(query()).toEqual({ q: 'BETA' });
    expect(screen.getByRole('status').textContent).toBe('1 of 4 checks');
  });

  it('filters by type, status, tag and group, together, from the address', async () => {
    renderAt('/checks?tag=prod');
    await screen.findByRole('table');
    expect(shownNames()).toEqual(['Alpha API', 'Charlie DNS']);
    expect((screen.getByLabelText('Tag') as HTMLSelectElement).value).toBe('prod');
    choose('Type', 'DNS');
    await waitFor(() => expect(shownNames()).toEqual(['Charlie DNS']));
    expect(query()).toEqual({ tag: 'prod', type: 'DNS' });
    choose('Status', 'failing');
    await screen.findByText(/No check matches these filters/);
    expect(screen.getByRole('status').textContent).toBe('0 of 4 checks');
  });

  it('filters the checks of a group and those of no group', async () => {
    renderAt('/checks');
    await screen.findByRole('table');
    const group = screen.getByLabelText('Group') as HTMLSelectElement;
    expect([...group.options].map((o) => o.textContent)).toEqual(['All', 'No group', 'Shop']);
    fireEvent.change(group, { target: { value: '3' } });
    await waitFor(() => expect(shownNames()).toEqual(['Alpha API', 'Charlie DNS']));
    choose('Group', 'none');
    await waitFor(() => expect(shownNames()).toEqual(['beta site', 'Delta port']));
  });

  it('clears every filter at once', async () => {
    renderAt('/checks?type=URL&status=passing');
    await screen.findByRole('table');
    expect(shownNames()).toEqual(['beta site']);
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(shownNames()).toHaveLength(4));
    expect(window.location.search).toBe('');
    expect(screen.queryByRole('button', { name: 'Clear filters' })).toBeNull();
  });
});

describe('sorting', () => {
  it('sorts by name, then the other way on a second press', async () => {
    renderAt('/checks');
    await screen.findByRole('table');
    fireEvent.click(screen.getByRole('button', { name: /^Name/ }));
    await waitFor(() =>
      expect(shownNames()).toEqual(['Alpha API', 'beta site', 'Charlie DNS', 'Delta port']),
    );
    expect(query()).toEqual({ sort: 'name' });
    expect(screen.getByRole('columnheader', { name: /^Name/ }).getAttribute('aria-sort')).toBe('ascending');
    fireEvent.click(screen.getByRole('button', { name: /^Name/ }));
    await waitFor(() =>
      expect(shownNames()).toEqual(['Delta port', 'Charlie DNS', 'beta site', 'Alpha API']),
    );
    expect(query()).toEqual({ sort: '-name' });
  });

  it('sorts by the latest run first and by the lowest availability first, never-run checks last', async () => {
    renderAt('/checks?sort=-lastRun');
    await screen.findByRole('table');
    expect(shownNames()).toEqual(['beta site', 'Charlie DNS', 'Alpha API', 'Delta port']);
    fireEvent.click(screen.getByRole('button', { name: /^Availability/ }));
    await waitFor(() =>
      expect(shownNames()).toEqual(['Alpha API', 'Charlie DNS', 'beta site', 'Delta port']),
    );
    expect(query()).toEqual({ sort: 'availability' });
    expect(screen.getByRole('table').querySelector('caption')?.textContent).toBe(
      'Checks, sorted by availability ascending',
    );
  });

  it('keeps the filters when the sort changes', async () => {
    renderAt('/checks?tag=prod');
    await screen.findByRole('table');
    fireEvent.click(screen.getByRole('button', { name: /^Name/ }));
    await waitFor(() => expect(query()).toEqual({ tag: 'prod', sort: 'name' }));
    expect(shownNames()).toEqual(['Alpha API', 'Charlie DNS']);
  });
});

describe('many checks', () => {
  // 1,000 checks, "Check 0000" … "Check 0999"; every tenth failing. Past 150 rows the table draws only the rows
  // in view and a few either side (table.tsx, useRowWindow); jsdom lays nothing out, so a row is taken to be
  // 49 px high and the viewport 768 px.
  const MANY = Array.from({ length: 1000 }, (_, i) =>
    check({ id: `chk-${i}`, name: `Check ${String(i).padStart(4, '0')}`, tags: i % 2 ? ['odd'] : [] }),
  );
  const MANY_STATUSES = MANY.map((c, i) => status(c.id, { hasFailures: i % 10 === 0 }));

  function renderMany(path: string) {
    api.route({
      'GET /v1/checks': checksOf(MANY),
      'GET /v1/check-statuses': statusesOf(MANY_STATUSES),
    });
    return renderAt(path);
  }

  /** Waits for the table of every check (the first checks are drawn before it). */
  async function whole() {
    await screen.findByRole('table');
    await waitFor(() => expect(screen.getByRole('status').textContent).toMatch(/^\d+ of \d+ checks$/));
  }

  /** Makes the table's body stand `rows` rows of 49 px above the viewport's top and tells the page it scrolled. */
  async function scrollRows(rows: number) {
    const body = screen.getByRole('table').querySelector('tbody')!;
    body.getBoundingClientRect = () => ({ top: -49 * rows, bottom: 0, left: 0, right: 0 }) as DOMRect;
    fireEvent.scroll(window);
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }

  it('draws only a window of the rows, saying how many there are', async () => {
    renderMany('/checks?sort=name');
    await whole();
    expect(screen.getByRole('status').textContent).toBe('1000 of 1000 checks');
    const table = screen.getByRole('table');
    expect(table.getAttribute('aria-rowcount')).toBe('1001');
    const names = shownNames();
    expect(names.length).toBeGreaterThan(10);
    expect(names.length).toBeLessThan(60);
    expect(names.slice(0, 2)).toEqual(['Check 0000', 'Check 0001']);
    const rows = within(table).getAllByRole('row');
    expect(rows[1]!.getAttribute('aria-rowindex')).toBe('2');
    // Every row drawn keeps its links and its status cells.
    expect(within(rows[1]!).getByRole('link', { name: 'Check 0000' }).getAttribute('href')).toBe(
      '/checks/chk-0',
    );
    expect(rows[1]!.querySelector('a[href="/checks/chk-0/results/res-chk-0"]')).not.toBeNull();
  });

  it('draws the later rows when the page scrolls, and the first ones again when it scrolls back', async () => {
    renderMany('/checks?sort=name');
    await whole();
    await scrollRows(500);
    await waitFor(() => expect(shownNames()).toContain('Check 0500'));
    const names = shownNames();
    expect(names).not.toContain('Check 0000');
    expect(names).toContain('Check 0510');
    const row = within(screen.getByRole('table'))
      .getAllByRole('row')
      .find((r) => r.textContent?.includes('Check 0500'))!;
    expect(row.getAttribute('aria-rowindex')).toBe('502');
    await scrollRows(990);
    await waitFor(() => expect(shownNames()).toContain('Check 0999'));
    await scrollRows(0);
    await waitFor(() => expect(shownNames()[0]).toBe('Check 0000'));
  });

  it('sorts and filters every row, not only those drawn', async () => {
    renderMany('/checks');
    await whole();
    // By status: the 100 failing checks first.
    expect(shownNames()[0]).toBe('Check 0000');
    expect(shownNames()[1]).toBe('Check 0010');
    fireEvent.click(screen.getByRole('button', { name: /^Name/ }));
    fireEvent.click(screen.getByRole('button', { name: /^Name/ }));
    await waitFor(() => expect(shownNames()[0]).toBe('Check 0999'));
    fireEvent.input(screen.getByLabelText('Search by name'), { target: { value: '0998' } });
    await waitFor(() => expect(shownNames()).toEqual(['Check 0998']));
    expect(screen.getByRole('status').textContent).toBe('1 of 1000 checks');
  });
});

describe('the first checks, then every check', () => {
  const MANY = Array.from({ length: 1000 }, (_, i) =>
    check({ id: `chk-${i}`, name: `Check ${String(i).padStart(4, '0')}` }),
  );
  const MANY_STATUSES = MANY.map((c, i) => status(c.id, { hasFailures: i % 10 === 0 }));

  /** Serves MANY, holding back the whole lists (not the first page) until the returned function is called. */
  function holdWholeLists(): () => void {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const checks = checksOf(MANY);
    const statuses = statusesOf(MANY_STATUSES);
    api.route({
      'GET /v1/checks': async (request) => {
        if (!request.query.has('limit')) await held;
        return checks(request);
      },
      'GET /v1/check-statuses': async (request) => {
        if (!request.query.has('checkId')) await held;
        return statuses(request);
      },
    });
    return release;
  }

  it('draws the first checks with their statuses at once, says the rest is loading, then draws every check', async () => {
    const release = holdWholeLists();
    renderAt('/checks');
    const table = await screen.findByRole('table');
    expect(screen.getByRole('status').textContent).toBe(
      '100 of the first 100 checks. Loading every check: until then, the counts, sorting and filters cover these.',
    );
    // The size of the whole table is not known yet.
    expect(table.getAttribute('aria-rowcount')).toBe('-1');
    // Failing first, among the first 100; every row drawn shows its status.
    expect(shownNames().slice(0, 3)).toEqual(['Check 0000', 'Check 0010', 'Check 0020']);
    const rows = within(table).getAllByRole('row').slice(1);
    for (const row of rows) expect(row.querySelector('.badge')).not.toBeNull();
    expect(rows[0]!.getAttribute('aria-rowindex')).toBe('2');

    // The first page's requests came first, then the whole lists.
    await waitFor(() => expect(api.requests('GET /v1/checks')).toHaveLength(2));
    const first = api.requests('GET /v1/checks')[0]!;
    expect(first.query.get('limit')).toBe('100');
    const firstStatuses = api.requests('GET /v1/check-statuses')[0]!;
    expect(firstStatuses.query.get('checkId')?.split(',')).toEqual(MANY.slice(0, 100).map((c) => c.id));
    expect(api.received.indexOf(firstStatuses)).toBeLessThan(
      api.received.findIndex((r) => r.path === '/v1/checks' && !r.query.has('limit')),
    );

    // Sorting and searching act at once on what is in, and the page still says the list is loading.
    fireEvent.click(screen.getByRole('button', { name: /^Name/ }));
    fireEvent.click(screen.getByRole('button', { name: /^Name/ }));
    await waitFor(() => expect(shownNames()[0]).toBe('Check 0099'));
    expect(screen.getByRole('status').textContent).toContain('Loading every check');

    release();
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('1000 of 1000 checks'));
    expect(screen.getByRole('table').getAttribute('aria-rowcount')).toBe('1001');
    // The sort chosen while loading now covers every check.
    expect(shownNames()[0]).toBe('Check 0999');
    fireEvent.input(screen.getByLabelText('Search by name'), { target: { value: '0555' } });
    await waitFor(() => expect(shownNames()).toEqual(['Check 0555']));
    // The statuses are polled as a whole list from now on (not per checkId).
    expect(api.requests('GET /v1/check-statuses').filter((r) => r.query.has('checkId'))).toHaveLength(1);
  });

  it('shows the first checks and says so when every check could not be loaded', async () => {
    api.route({
      'GET /v1/checks': (request) =>
        request.query.has('limit')
          ? checksOf(MANY)(request)
          : { status: 503, body: { statusCode: 503, error: 'Service Unavailable', message: 'busy' } },
      'GET /v1/check-statuses': statusesOf(MANY_STATUSES),
    });
    renderAt('/checks');
    await screen.findByRole('table');
    await screen.findByText(
      'Every check could not be loaded yet; the first checks are shown, and loading is tried again',
      {},
      { timeout: 5000 },
    );
    expect(shownNames()[0]).toBe('Check 0000');
    expect(screen.getByRole('status').textContent).toContain('of the first 100 checks');
  });

  it('draws every check from the whole lists when the first read fails', async () => {
    api.route({
      'GET /v1/checks': (request) =>
        request.query.has('limit')
          ? { status: 500, body: { statusCode: 500, error: 'Internal Server Error', message: 'boom' } }
          : checksOf(MANY)(request),
      'GET /v1/check-statuses': statusesOf(MANY_STATUSES),
    });
    renderAt('/checks');
    await screen.findByText('1000 of 1000 checks');
    expect(screen.queryByText(/could not be loaded/)).toBeNull();
  });
});

describe('conditional polls', () => {
  it("names the statuses' last ETag in If-None-Match and keeps the same list on a 304", async () => {
    const { listCheckStatuses } = await import('../../../app/src/api/checks.js');
    api.route({
      'GET /v1/check-statuses': (request) =>
        request.headers['if-none-match'] === 'W/"v1"'
          ? { status: 304, headers: { etag: 'W/"v1"' } }
          : { status: 200, body: STATUSES, headers: { etag: 'W/"v1"' } },
    });
    const first = await listCheckStatuses();
    expect(first).toHaveLength(4);
    const second = await listCheckStatuses();
    // The same array: the page's rows, memoised on it, are not built again.
    expect(second).toBe(first);
    const sent = api.requests('GET /v1/check-statuses');
    expect(sent[0]!.headers['if-none-match']).toBeUndefined();
    expect(sent[1]!.headers['if-none-match']).toBe('W/"v1"');
    // A new tag: the new list.
    api.route({
      'GET /v1/check-statuses': { status: 200, body: STATUSES.slice(0, 1), headers: { etag: 'W/"v2"' } },
    });
    expect(await listCheckStatuses()).toHaveLength(1);
  });
});
