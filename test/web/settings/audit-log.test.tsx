import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import SettingsPage from '../../../app/src/settings/page.js';
import { renderRoute, serveApi } from '../dom.js';
import { choose, type } from '../forms.js';

// The audit log page in a real DOM against a loopback API: the entries newest first with who, what and a link
// to the resource, the filters sent as the query, older pages by the cursor, an entry's changes field by field,
// the ADMIN-only tab, and the service's 403 said in words.

const KEY = { kind: 'api-key', id: 'key-1', name: 'CI deploy', role: 'ADMIN' } as const;

function entry(fields: Record<string, unknown> = {}) {
  return {
    id: 'e2',
    occurredAt: '2026-03-01T10:00:00.000Z',
    actor: KEY,
    action: 'check.update',
    resourceType: 'check',
    resourceId: 'chk-1',
    before: { name: 'Home', frequency: 10, request: { headers: [{ key: 'Authorization', value: '*****' }] } },
    after: { name: 'Home page', frequency: 10, request: { headers: [] } },
    ip: '203.0.113.7',
    userAgent: 'terraform/1.9',
    ...fields,
  };
}

const SESSION = {
  accountId: 'acc',
  accountName: 'Acme',
  csrfToken: 't',
  expiresAt: '2026-04-01T00:00:00.000Z',
  keyPrefix: 'op_abcd',
  user: null,
  role: 'ADMIN',
};

const api = serveApi(() => ({
  'GET /auth/session': { status: 200, body: SESSION },
  'GET /v1/audit-log': (request) =>
    request.query.get('nextId') === 'cursor-2'
      ? {
          status: 200,
          body: [
            entry({ id: 'e0', action: 'check.create', before: null, occurredAt: '2026-02-01T10:00:00.000Z' }),
          ],
        }
      : {
          status: 200,
          body: [
            entry(),
            entry({
              id: 'e1',
              action: 'variable.delete',
              resourceType: 'variable',
              resourceId: 'TOKEN',
              after: null,
              actor: { kind: 'user', id: 'u-1', name: 'ann@example.com', role: 'OWNER' },
            }),
          ],
          headers: { 'x-next-id': 'cursor-2' },
        },
}));

const renderPage = () => renderRoute('/settings/audit-log', <SettingsPage section="audit-log" />);

describe('the audit log page', () => {
  it('lists who did what, newest first, linking to the resource; older entries by the cursor', async () => {
    renderPage();
    const table = await screen.findByRole('table', { name: 'Audit log' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.textContent).toContain('API key CI deploy');
    expect(rows[0]!.textContent).toContain('check.update');
    expect(within(rows[0]!).getByRole('link', { name: 'check chk-1' }).getAttribute('href')).toBe(
      '/checks/chk-1',
    );
    expect(rows[1]!.textContent).toContain('ann@example.com');
    // A deleted resource has no page to link to.
    expect(within(rows[1]!).queryByRole('link')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Load older entries' }));
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(4));
    expect(api.requests('GET /v1/audit-log').at(-1)!.query.get('nextId')).toBe('cursor-2');
    expect(screen.queryByRole('button', { name: 'Load older entries' })).toBeNull();
    // The tab is there for an ADMIN.
    expect(screen.getByRole('link', { name: 'Audit log' }).getAttribute('aria-current')).toBe('page');
  });

  it('sends the filters as the query', async () => {
    renderPage();
    await screen.findByRole('table', { name: 'Audit log' });
    choose('Resource', 'variable');
    await waitFor(() =>
      expect(api.requests('GET /v1/audit-log').at(-1)!.query.get('resourceType')).toBe('variable'),
    );
    type(/Actor id/, 'u-1');
    await waitFor(() => expect(api.requests('GET /v1/audit-log').at(-1)!.query.get('actor')).toBe('u-1'));
    fireEvent.input(screen.getByLabelText('From'), { target: { value: '2026-03-01' } });
    await waitFor(() => {
      const from = api.requests('GET /v1/audit-log').at(-1)!.query.get('from');
      expect(from).not.toBeNull();
      expect(new Date(from!).getDate()).toBe(1);
    });
  });

  it('opens an entry: who, from where, and each changed field before and after', async () => {
    renderPage();
    await screen.findByRole('table', { name: 'Audit log' });
    fireEvent.click(screen.getAllByRole('button', { name: /^Open check.update/ })[0]!);
    const view = await screen.findByRole('region', { name: /check\.update/ });
    expect(view.textContent).toContain('203.0.113.7');
    expect(view.textContent).toContain('terraform/1.9');
    const changes = within(view).getByRole('table', { name: 'Changes' });
    const byField = Object.fromEntries(
      within(changes)
        .getAllByRole('row')
        .slice(1)
        .map((row) => [
          row.querySelector('th')!.textContent,
          [...row.querySelectorAll('td')].map((td) => td.textContent),
        ]),
    );
    expect(byField).toEqual({
      name: ['"Home"', '"Home page"'],
      'request.headers[0].key': ['"Authorization"', '—'],
      'request.headers[0].value': ['"*****"', '—'],
    });
    fireEvent.click(within(view).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('region', { name: /check\.update/ })).toBeNull();
  });

  it('says so when the role may not read it, and hides its tab from the others', async () => {
    api.route({
      'GET /auth/session': { status: 200, body: { ...SESSION, role: 'READ_WRITE' } },
      'GET /v1/audit-log': {
        status: 403,
        body: {
          statusCode: 403,
          error: 'Forbidden',
          message: 'no',
          attributes: { code: 'OUTPOST_ERR_FORBIDDEN' },
        },
      },
    });
    renderPage();
    expect((await screen.findByRole('alert')).textContent).toContain('Only an ADMIN or OWNER');
    renderRoute('/settings/variables', <SettingsPage section="variables" />, 'READ_WRITE');
    await screen.findAllByRole('navigation', { name: 'Settings' });
    const navs = screen.getAllByRole('navigation', { name: 'Settings' });
    expect(within(navs.at(-1)!).queryByRole('link', { name: 'Audit log' })).toBeNull();
  });
});
