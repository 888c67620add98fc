import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import StatusPagesPage from '../../../app/src/status-pages/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { type } from '../forms.js';

// The status pages page in a real DOM against a loopback API: the pages with their cards, creating a page
// (the address follows the name, cards and their services, a private page's key shown once, the service's
// 400 at its field), editing one, and the services (add, rename, a delete refused while a card shows it).

const SERVICES = [
  { id: 'svc-1', name: 'Website', checks: [{ id: 'chk-1', name: 'Home page', severity: 'MAJOR' }] },
  { id: 'svc-2', name: 'Public API', checks: [] },
];

function statusPage(fields: Record<string, unknown> = {}) {
  return {
    id: 'sp-1',
    name: 'Acme status',
    url: 'acme',
    description: 'How Acme is doing.',
    isPrivate: false,
    keys: [],
    customDomain: null,
    customDomainStatus: null,
    customDomainVerification: null,
    customDomainProblem: null,
    cards: [{ id: 'card-1', name: 'Services', services: [SERVICES[0]] }],
    incidents: [
      { id: 'inc-1', name: 'Slow checkout', lastUpdateStatus: 'INVESTIGATING' },
      { id: 'inc-2', name: 'Old outage', lastUpdateStatus: 'RESOLVED' },
    ],
    ...fields,
  };
}

const api = serveApi(() => ({
  'GET /v1/status-pages': { status: 200, body: { entries: [statusPage()], nextId: null } },
  'GET /v1/status-pages/services': { status: 200, body: { entries: SERVICES, nextId: null } },
  'GET /v1/checks': { status: 200, body: [] },
}));

function renderPage() {
  return renderRoute('/status-pages', <StatusPagesPage />);
}

describe('the pages', () => {
  it('shows each page with its link, visibility, cards and open incidents', async () => {
    renderPage();
    const card = await screen.findByRole('article', { name: 'Acme status' });
    const link = within(card).getByRole('link', { name: /\/status\/acme/ });
    expect(link.getAttribute('href')).toBe('/status/acme');
    expect(link.getAttribute('target')).toBe('_blank');
    expect(card.textContent).toContain('Public');
    expect(card.textContent).toContain('How Acme is doing.');
    const services = within(card).getByRole('list', { name: 'Services of card Services' });
    expect(services.textContent).toBe('Website');
    const incident = within(card).getByRole('link', { name: 'Slow checkout' });
    expect(incident.getAttribute('href')).toBe('/incidents/inc-1');
    expect(within(card).queryByRole('link', { name: 'Old outage' })).toBeNull();
  });

  it('shows a private page’s keys and a pending custom domain with its TXT record', async () => {
    api.route({
      'GET /v1/status-pages': {
        status: 200,
        body: {
          entries: [
            statusPage({
              isPrivate: true,
              keys: [{ id: 'k1' }, { id: 'k2' }],
              customDomain: 'status.acme.com',
              customDomainStatus: 'PENDING',
              customDomainVerification: { name: '_outpost.status.acme.com', type: 'TXT', value: 'tok-123' },
              customDomainProblem: 'no TXT record found',
              cards: [],
              incidents: [],
            }),
          ],
          nextId: null,
        },
      },
      'POST /v1/status-pages/sp-1/custom-domain/verify': { status: 200, body: statusPage() },
    });
    renderPage();
    const card = await screen.findByRole('article', { name: 'Acme status' });
    expect(card.textContent).toContain('Private');
    expect(card.textContent).toContain('2 access keys');
    expect(card.textContent).toContain('Domain pending');
    expect(card.textContent).toContain('No card: the page shows no service yet.');
    expect(card.textContent).toContain('No open incident on its services.');
    const domain = within(card).getByRole('region', { name: 'Verify status.acme.com' });
    expect(within(domain).getByText('tok-123')).toBeTruthy();
    expect(domain.textContent).toContain('Last check: no TXT record found.');
    fireEvent.click(within(domain).getByRole('button', { name: /Check now/ }));
    await waitFor(() =>
      expect(api.requests('POST /v1/status-pages/sp-1/custom-domain/verify')).toHaveLength(1),
    );
  });

  it('says how to start when there is no page', async () => {
    api.route({ 'GET /v1/status-pages': { status: 200, body: { entries: [], nextId: null } } });
    renderPage();
    await screen.findByText(/No status page yet/);
  });
});

describe('creating a page', () => {
  it('suggests the address from the name and sends the cards with their services', async () => {
    api.route({
      'POST /v1/status-pages': {
        status: 201,
        body: statusPage({ id: 'sp-2', name: 'Shop status', url: 'shop-status' }),
      },
    });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'New status page' }));
    const form = screen.getByRole('form', { name: 'New status page' });
    type('Name', 'Shop Status!');
    expect((within(form).getByLabelText(/^Address/) as HTMLInputElement).value).toBe('shop-status');
    expect(form.textContent).toContain('/status/shop-status');
    type(/^Description/, '  Orders and payments  ');
    fireEvent.click(await within(form).findByLabelText('Public API'));
    fireEvent.click(within(form).getByRole('button', { name: 'Add card' }));
    type('Name of card 2', 'Internal');
    fireEvent.click(within(form).getByRole('button', { name: 'Create status page' }));
    await waitFor(() => expect(api.requests('POST /v1/status-pages')).toHaveLength(1));
    expect(api.requests('POST /v1/status-pages')[0]?.body).toEqual({
      name: 'Shop Status!',
      url: 'shop-status',
      description: 'Orders and payments',
      isPrivate: false,
      defaultTheme: 'AUTO',
      logo: null,
      redirectTo: null,
      favicon: null,
      customDomain: null,
      cards: [
        { name: 'Services', services: [{ id: 'svc-2' }] },
        { name: 'Internal', services: [] },
      ],
    });
    await waitFor(() => expect(screen.queryByRole('form', { name: 'New status page' })).toBeNull());
  });

  it('keeps an address typed by hand, moves and removes cards', async () => {
    api.route({ 'POST /v1/status-pages': { status: 201, body: statusPage({ id: 'sp-3' }) } });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'New status page' }));
    const form = screen.getByRole('form', { name: 'New status page' });
    type(/^Address/, 'my-page');
    type('Name', 'Something else');
    expect((within(form).getByLabelText(/^Address/) as HTMLInputElement).value).toBe('my-page');
    fireEvent.click(within(form).getByRole('button', { name: 'Add card' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Add card' }));
    type('Name of card 2', 'Second');
    type('Name of card 3', 'Third');
    expect(
      (within(form).getByRole('button', { name: /^Move up\s*card 1$/ }) as HTMLButtonElement).disabled,
    ).toBe(true);
    expect(
      (within(form).getByRole('button', { name: /^Move down\s*card 3$/ }) as HTMLButtonElement).disabled,
    ).toBe(true);
    fireEvent.click(within(form).getByRole('button', { name: /^Move up\s*card 3$/ }));
    fireEvent.click(within(form).getByRole('button', { name: 'Remove card 1' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Create status page' }));
    await waitFor(() => expect(api.requests('POST /v1/status-pages')).toHaveLength(1));
    const body = api.requests('POST /v1/status-pages')[0]?.body as { url: string; cards: { name: string }[] };
    expect(body.url).toBe('my-page');
    expect(body.cards.map((c) => c.name)).toEqual(['Third', 'Second']);
  });

  it('shows the access key of a new private page once', async () => {
    api.route({
      'POST /v1/status-pages': {
        status: 201,
        body: statusPage({
          id: 'sp-4',
          name: 'Team page',
          isPrivate: true,
          keys: [{ id: 'k1', key: 'spk_secret_1' }],
        }),
      },
    });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'New status page' }));
    type('Name', 'Team page');
    fireEvent.click(screen.getByLabelText(/^Private/));
    fireEvent.click(screen.getByRole('button', { name: 'Create status page' }));
    await waitFor(() => expect(api.requests('POST /v1/status-pages')).toHaveLength(1));
    expect(api.requests('POST /v1/status-pages')[0]?.body).toMatchObject({ isPrivate: true });
    await screen.findByText(/Access key of the private page “Team page”/);
    expect((screen.getByLabelText('Access key of Team page') as HTMLInputElement).value).toBe('spk_secret_1');
  });

  it('shows the service’s 400 next to the field it names', async () => {
    api.route({ 'POST /v1/status-pages': validationError('url is already taken', 'url') });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'New status page' }));
    type('Name', 'Acme status');
    fireEvent.click(screen.getByRole('button', { name: 'Create status page' }));
    const field = screen.getByLabelText(/^Address/);
    await waitFor(() => expect(field.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('url is already taken')).toBeTruthy();
    expect(screen.getByRole('form', { name: 'New status page' })).toBeTruthy();
  });
});

describe('editing a page', () => {
  it('starts from the page, keeps its cards’ ids and sends a PUT', async () => {
    api.route({ 'PUT /v1/status-pages/sp-1': { status: 200, body: statusPage({ name: 'Acme' }) } });
    renderPage();
    const card = await screen.findByRole('article', { name: 'Acme status' });
    fireEvent.click(within(card).getByRole('button', { name: /^Edit\s*Acme status$/ }));
    const form = screen.getByRole('form', { name: /^Edit\s*Acme status$/ });
    expect((within(form).getByLabelText(/^Address/) as HTMLInputElement).value).toBe('acme');
    expect(((await within(form).findByLabelText('Website')) as HTMLInputElement).checked).toBe(true);
    // The address of an existing page does not follow its name.
    fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'Acme' } });
    expect((within(form).getByLabelText(/^Address/) as HTMLInputElement).value).toBe('acme');
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.requests('PUT /v1/status-pages/sp-1')).toHaveLength(1));
    expect(api.requests('PUT /v1/status-pages/sp-1')[0]?.body).toEqual({
      name: 'Acme',
      url: 'acme',
      description: 'How Acme is doing.',
      isPrivate: false,
      defaultTheme: 'AUTO',
      logo: null,
      redirectTo: null,
      favicon: null,
      customDomain: null,
      cards: [{ id: 'card-1', name: 'Services', services: [{ id: 'svc-1' }] }],
    });
    await waitFor(() => expect(screen.queryByRole('form', { name: /^Edit\s*Acme status$/ })).toBeNull());
  });
});

describe('the page’s look and address', () => {
  const colors = (c: string) =>
    Object.fromEntries(
      [
        'bodyBackgroundColor',
        'headerBackgroundColor',
        'headerFontColor',
        'titleFontColor',
        'bodyFontColor',
        'bodyFontColorMuted',
        'navigationFontColor',
        'linkFontColor',
        'cardBackgroundColor',
        'borderColor',
        'primaryButtonBackgroundColor',
        'primaryButtonFontColor',
      ].map((f) => [f, c]),
    );

  it('edits theme, colours, logo, its link, favicon and the custom domain as fields, and checks a pending domain', async () => {
    const pending = statusPage({
      defaultTheme: 'AUTO',
      themeColors: { light: colors('#ffffff'), dark: colors('#000000') },
      logo: 'https://acme.test/logo.png',
      customDomain: 'status.acme.com',
      customDomainStatus: 'PENDING',
      customDomainVerification: {
        name: '_outpost-challenge.status.acme.com',
        type: 'TXT',
        value: 'outpost-verify=abc',
      },
      customDomainProblem: 'no TXT record at _outpost-challenge.status.acme.com',
    });
    api.route({
      'GET /v1/status-pages': { status: 200, body: { entries: [pending], nextId: null } },
      'POST /v1/status-pages/sp-1/custom-domain/verify': {
        status: 200,
        body: { ...pending, customDomainStatus: 'VERIFIED', customDomainProblem: null },
      },
      'PUT /v1/status-pages/sp-1': { status: 200, body: pending },
    });
    renderPage();
    const card = await screen.findByRole('article', { name: 'Acme status' });
    fireEvent.click(within(card).getByRole('button', { name: /^Edit\s*Acme status$/ }));
    const form = screen.getByRole('form', { name: /^Edit\s*Acme status$/ });
    const look = within(form).getByRole('group', { name: 'Look and address' });
    expect((within(look).getByLabelText(/^Logo \(optional\)/) as HTMLInputElement).value).toBe(
      'https://acme.test/logo.png',
    );
    // The saved domain's state, the record to add and Check now.
    expect(look.textContent).toContain('Domain pending');
    expect(look.textContent).toContain('outpost-verify=abc');
    fireEvent.click(within(look).getByRole('button', { name: /^Check now/ }));
    await within(look).findByText(/The page is served at status\.acme\.com/);
    expect(api.requests('POST /v1/status-pages/sp-1/custom-domain/verify')).toHaveLength(1);

    fireEvent.change(within(look).getByLabelText(/^Theme/), { target: { value: 'DARK' } });
    fireEvent.input(within(look).getByLabelText(/^Logo links to/), {
      target: { value: 'https://acme.test/' },
    });
    fireEvent.input(within(look).getByLabelText(/^Favicon/), {
      target: { value: 'https://acme.test/icon.png' },
    });
    fireEvent.input(within(look).getByLabelText('Links (dark)'), { target: { value: '#93c5fd' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.requests('PUT /v1/status-pages/sp-1')).toHaveLength(1));
    expect(api.requests('PUT /v1/status-pages/sp-1')[0]?.body).toMatchObject({
      defaultTheme: 'DARK',
      logo: 'https://acme.test/logo.png',
      redirectTo: 'https://acme.test/',
      favicon: 'https://acme.test/icon.png',
      customDomain: 'status.acme.com',
      themeColors: { light: colors('#ffffff'), dark: { ...colors('#000000'), linkFontColor: '#93c5fd' } },
    });
  });
});

describe('linking checks to a service', () => {
  const check = (id: string, name: string, triggerIncident: unknown = null) => ({
    id,
    name,
    activated: true,
    heartbeat: {},
    script: null,
    triggerIncident,
  });

  it('lists the account’s checks by name, links one on a tick with its heartbeat and script sent back, and says so', async () => {
    api.route({
      'GET /v1/checks': {
        status: 200,
        body: [
          check('chk-2', 'Status API'),
          check('chk-1', 'Home page', { serviceId: 'svc-1', severity: 'MAJOR' }),
        ],
      },
      'PUT /v1/checks/chk-2': { status: 200, body: check('chk-2', 'Status API') },
    });
    renderPage();
    const table = await screen.findByRole('table', { name: 'Status-page services' });
    expect(within(table).getAllByRole('row')[1]?.textContent).toContain('Home page');
    fireEvent.click(within(table).getByRole('button', { name: /^Link checks\s*of Public API$/ }));
    const picker = await screen.findByRole('group', { name: 'Checks of Public API' });
    const home = (await within(picker).findByLabelText('Home page')) as HTMLInputElement;
    expect(home.checked).toBe(false);
    expect(picker.textContent).toContain('Linked to Website: ticking moves it here.');
    fireEvent.change(screen.getByLabelText(/^Severity of new links/), { target: { value: 'MINOR' } });
    fireEvent.click(within(picker).getByLabelText('Status API'));
    await screen.findByText('Status API is linked to Public API.');
    expect(api.requests('PUT /v1/checks/chk-2')[0]?.body).toEqual({
      heartbeat: {},
      script: null,
      triggerIncident: {
        serviceId: 'svc-2',
        severity: 'MINOR',
        name: 'Public API is down',
        description: 'The check Status API is failing.',
        notifySubscribers: false,
      },
    });
  });
});

describe('services', () => {
  it('lists each service with the pages that show it', async () => {
    renderPage();
    const table = await screen.findByRole('table', { name: 'Status-page services' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringContaining('WebsiteAcme status'),
      expect.stringContaining('Public APIno page'),
    ]);
  });

  it('adds a service, and shows the 400 at its field', async () => {
    api.route({ 'POST /v1/status-pages/services': { status: 201, body: { id: 'svc-3', name: 'Docs' } } });
    renderPage();
    await screen.findByRole('table', { name: 'Status-page services' });
    type(/^New service/, '  Docs ');
    fireEvent.click(screen.getByRole('button', { name: 'Add service' }));
    await waitFor(() => expect(api.requests('POST /v1/status-pages/services')).toHaveLength(1));
    expect(api.requests('POST /v1/status-pages/services')[0]?.body).toEqual({ name: 'Docs' });
    await waitFor(() => expect((screen.getByLabelText(/^New service/) as HTMLInputElement).value).toBe(''));

    api.route({ 'POST /v1/status-pages/services': validationError('name must not be empty', 'name') });
    fireEvent.click(screen.getByRole('button', { name: 'Add service' }));
    await screen.findByText('name must not be empty');
    expect(screen.getByLabelText(/^New service/).getAttribute('aria-invalid')).toBe('true');
  });

  it('renames a service in place', async () => {
    api.route({ 'PUT /v1/status-pages/services/svc-2': { status: 200, body: { id: 'svc-2', name: 'API' } } });
    renderPage();
    await screen.findByRole('table', { name: 'Status-page services' });
    fireEvent.click(screen.getByRole('button', { name: /^Rename\s*Public API$/ }));
    const form = screen.getByRole('form', { name: /^Rename\s*Public API$/ });
    fireEvent.input(within(form).getByLabelText(/^New name of Public API/), { target: { value: 'API ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.requests('PUT /v1/status-pages/services/svc-2')).toHaveLength(1));
    expect(api.requests('PUT /v1/status-pages/services/svc-2')[0]?.body).toEqual({ name: 'API' });
    await waitFor(() => expect(screen.queryByRole('form', { name: /^Rename\s*Public API$/ })).toBeNull());
  });

  it('names the pages whose cards still show a service it cannot delete', async () => {
    api.route({
      'DELETE /v1/status-pages/services/svc-1': {
        status: 409,
        body: {
          statusCode: 409,
          error: 'Conflict',
          message: 'the service is shown on status pages',
          attributes: { code: 'OUTPOST_ERR_CONFLICT', statusPageIds: ['sp-1'] },
        },
      },
    });
    renderPage();
    const table = await screen.findByRole('table', { name: 'Status-page services' });
    fireEvent.click(within(table).getByRole('button', { name: /^Delete\s*Website$/ }));
    fireEvent.click(await screen.findByRole('button', { name: 'Delete service' }));
    await screen.findByText(/a card of the status page Acme status shows it/);
    expect(api.requests('DELETE /v1/status-pages/services/svc-1')).toHaveLength(1);
  });
});
