import { fireEvent, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import CheckFormPage from '../../../app/src/checks/form/page.js';
import { renderRoute, serveApi } from '../dom.js';
import { choose, field, type } from '../forms.js';

// The SSL and traceroute monitor forms in a real DOM against a loopback API: the fields each shows, the
// required host checked before sending, and the request each sends.

const api = serveApi(() => ({
  'GET /v1/check-groups': { status: 200, body: [] },
  'GET /v1/private-locations': { status: 200, body: [] },
  'GET /v1/runtimes': { status: 200, body: [] },
  'GET /v1/alert-channels': { status: 200, body: [] },
  'GET /v1/snippets': { status: 200, body: [] },
}));

const saved = (checkType: string) => ({
  id: 'chk-9',
  checkType,
  name: 'x',
  activated: true,
  locations: [],
  privateLocations: [],
  tags: [],
  frequency: 1,
  request: {},
});

describe('new SSL monitor', () => {
  it('requires the hostname, then sends the sslConfig typed', async () => {
    api.route({ 'POST /v1/checks/ssl': { status: 201, body: saved('SSL') } });
    renderRoute('/checks/new?type=SSL', <CheckFormPage />);
    const create = await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Shop certificate');
    fireEvent.click(create);
    const hostname = field(/^Hostname/);
    await waitFor(() => expect(hostname.getAttribute('aria-invalid')).toBe('true'));
    expect(api.received.filter((r) => r.method !== 'GET')).toEqual([]);

    type(/^Hostname/, 'shop.example.com');
    type(/^Port/, '8443');
    type(/^Server name/, 'www.example.com');
    type(/^Degraded within/, '30');
    fireEvent.click(field(/^Skip chain validation/));
    fireEvent.click(create);

    await waitFor(() => expect(api.requests('POST /v1/checks/ssl')).toHaveLength(1));
    expect(api.requests('POST /v1/checks/ssl')[0]?.body).toMatchObject({
      name: 'Shop certificate',
      degradedResponseTime: 3000,
      maxResponseTime: 10_000,
      request: {
        sslConfig: {
          hostname: 'shop.example.com',
          port: 8443,
          serverName: 'www.example.com',
          alertDaysBeforeExpiry: 30,
          skipChainValidation: true,
          handshakeTimeoutMs: 10_000,
          ipFamily: 'IPv4',
        },
        assertions: [],
      },
    });
  });
});

describe('new traceroute monitor', () => {
  it('shows the UDP port only for UDP probes and sends the request typed', async () => {
    api.route({ 'POST /v1/checks/traceroute': { status: 201, body: saved('TRACEROUTE') } });
    renderRoute('/checks/new?type=TRACEROUTE', <CheckFormPage />);
    const create = await screen.findByRole('button', { name: 'Create check' });
    expect(screen.queryByLabelText(/^First UDP port/)).toBeNull();
    type(/^Name/, 'Path to shop');
    type(/^Host/, 'shop.example.com');
    choose(/^Probes/, 'UDP');
    await waitFor(() => expect(screen.queryByLabelText(/^First UDP port/)).not.toBeNull());
    type(/^First UDP port/, '40000');
    type(/^Most hops/, '20');
    fireEvent.click(field(/^Look up hop names/));
    fireEvent.click(create);

    await waitFor(() => expect(api.requests('POST /v1/checks/traceroute')).toHaveLength(1));
    expect(api.requests('POST /v1/checks/traceroute')[0]?.body).toMatchObject({
      name: 'Path to shop',
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: {
        url: 'shop.example.com',
        protocol: 'UDP',
        port: 40_000,
        maxHops: 20,
        maxUnknownHops: 15,
        ptrLookup: false,
        timeout: 10,
        ipFamily: 'IPv4',
      },
    });
  });
});
