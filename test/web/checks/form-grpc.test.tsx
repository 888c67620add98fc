import { fireEvent, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import CheckFormPage from '../../../app/src/checks/form/page.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { choose, field, type } from '../forms.js';

// The gRPC monitor's form in a real DOM against a loopback API: the request it sends in each mode, the
// other mode's fields cleared when the mode changes, and the service's 400 shown at its field.

const api = serveApi(() => ({
  'GET /v1/check-groups': { status: 200, body: [] },
  'GET /v1/private-locations': { status: 200, body: [] },
  'GET /v1/runtimes': { status: 200, body: [] },
  'GET /v1/alert-channels': { status: 200, body: [] },
  'GET /v1/snippets': { status: 200, body: [] },
}));

const created = { id: 'grpc-1', checkType: 'GRPC', name: 'Users API' };

function renderNew() {
  return renderRoute('/checks/new?type=GRPC', <CheckFormPage />);
}

describe('new gRPC monitor', () => {
  it('sends a health check by default: host, port, TLS and the service asked about', async () => {
    api.route({ 'POST /v1/checks/grpc': { status: 201, body: created } });
    renderNew();
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Users API');
    type(/^Host/, 'grpc.example.com');
    type(/^Service/, 'outpost.test.Users');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(api.requests('POST /v1/checks/grpc')).toHaveLength(1));
    expect(api.requests('POST /v1/checks/grpc')[0]?.body).toMatchObject({
      name: 'Users API',
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: {
        url: 'grpc.example.com',
        port: 443,
        timeout: 10,
        grpcConfig: {
          mode: 'HEALTH',
          tls: true,
          service: 'outpost.test.Users',
          method: '',
          protoContent: '',
        },
      },
    });
  });

  it('calls a method with a message and metadata; the health service is cleared when the mode changes', async () => {
    api.route({ 'POST /v1/checks/grpc': { status: 201, body: created } });
    renderNew();
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Users API');
    type(/^Host/, '10.0.0.5');
    type(/^Service/, 'left.over');
    choose(/^Mode/, 'BEHAVIOR');
    type(/^Method/, '/outpost.test.Users/GetUser');
    type(/^Request message/, '{"id":"42"}');
    fireEvent.click(screen.getByRole('button', { name: 'Add header' }));
    type(/^Header 1 name/, 'authorization');
    type(/^Header 1 value/, 'Bearer {{TOKEN}}');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(api.requests('POST /v1/checks/grpc')).toHaveLength(1));
    expect(api.requests('POST /v1/checks/grpc')[0]?.body).toMatchObject({
      request: {
        url: '10.0.0.5',
        grpcConfig: {
          mode: 'BEHAVIOR',
          method: '/outpost.test.Users/GetUser',
          message: '{"id":"42"}',
          service: '',
          metadata: [{ key: 'authorization', value: 'Bearer {{TOKEN}}' }],
        },
      },
    });
  });

  it('asks for the method before sending, and shows the service’s 400 at the field it names', async () => {
    api.route({
      'POST /v1/checks/grpc': validationError(
        'must name its service: /package.Service/Method, or Method with serviceDefinition',
        'request.grpcConfig.method',
      ),
    });
    renderNew();
    await screen.findByRole('button', { name: 'Create check' });
    type(/^Name/, 'Users API');
    type(/^Host/, 'grpc.example.com');
    choose(/^Mode/, 'BEHAVIOR');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    await waitFor(() => expect(screen.getByText('Method is required.')).toBeTruthy());
    expect(api.requests('POST /v1/checks/grpc')).toHaveLength(0);

    type(/^Method/, 'GetUser');
    fireEvent.click(screen.getByRole('button', { name: 'Create check' }));
    const method = field(/^Method/);
    await waitFor(() => expect(method.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText(/must name its service/)).toBeTruthy();
  });
});
