import { afterEach, describe, expect, it } from 'vitest';
import { icmpBody, type TestService, testService } from '../../../helpers/service.js';

// Bodies as the hosted API's own clients send them (its Go SDK, and so its Terraform provider): an empty body
// sent as application/json is no body, and `heartbeat` and `script`, which the hosted API's current document
// no longer requires, may be left out of an ICMP create and of the generic update.

let svc: TestService;
afterEach(async () => svc?.close());

const json = { 'content-type': 'application/json' };

describe('an empty application/json body is no body', () => {
  it('DELETE and a bodiless POST work; a route that needs a body names it; a broken body is still refused', async () => {
    svc = await testService();
    const created = await svc.request('POST', '/v1/checks/icmp', icmpBody({ activated: false }));
    const id = created.json().id as string;
    const trigger = await svc.app.inject({
      method: 'POST',
      url: '/v1/check-sessions/trigger',
      headers: { ...svc.auth(), ...json },
      payload: '',
    });
    expect(trigger.statusCode, trigger.body).toBe(201);
    const deleted = await svc.app.inject({
      method: 'DELETE',
      url: `/v1/checks/${id}`,
      headers: { ...svc.auth(), ...json },
      payload: '',
    });
    expect(deleted.statusCode, deleted.body).toBe(204);

    const empty = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: { ...svc.auth(), ...json },
      payload: '',
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(empty.json().message).not.toMatch(/cannot be empty/);

    const broken = await svc.app.inject({
      method: 'POST',
      url: '/v1/checks/icmp',
      headers: { ...svc.auth(), ...json },
      payload: '{"name":',
    });
    expect(broken.statusCode).toBe(400);
    const poisoned = await svc.app.inject({
      method: 'POST',
      url: '/v1/variables',
      headers: { ...svc.auth(), ...json },
      payload: '{"key":"A","value":"b","__proto__":{"admin":true}}',
    });
    expect(poisoned.statusCode).toBe(400);
  });
});

describe('heartbeat and script are not required', () => {
  it('an ICMP check is created without them (defaults {} and ""), and the generic update leaves them out', async () => {
    svc = await testService();
    const { heartbeat: _h, script: _s, ...bare } = icmpBody({ activated: false });
    const created = await svc.request('POST', '/v1/checks/icmp', bare);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ heartbeat: {}, script: '' });
    const id = created.json().id as string;

    const renamed = await svc.request('PUT', `/v1/checks/${id}`, { name: 'renamed' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'renamed', heartbeat: {}, script: '' });
    // Sent, they are still checked.
    const bad = await svc.request('PUT', `/v1/checks/${id}`, { heartbeat: { period: 0 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().attributes).toMatchObject({ field: 'heartbeat.period' });
  });
});
