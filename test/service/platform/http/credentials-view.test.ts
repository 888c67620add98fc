import { afterEach, describe, expect, it } from 'vitest';
import { type TestService, testService } from '../../../helpers/service.js';

// docs/security.md, "Credentials in answers": stored credentials are answered masked, unless the operator sets
// OUTPOST_API_CREDENTIALS=clear, and then only to API-key requests (the web app always sees them masked); a
// `secret` variable is never answered in either view.

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const PASSWORD = 'planted-basic-password-41';
const TOKEN = 'Bearer planted-header-token-41';
const GROUP_PASSWORD = 'planted-group-password-41';
const INTEGRATION_KEY = 'planted-opsgenie-key-41';
const SECRET_VARIABLE = 'planted-secret-variable-41';

/** Makes a check, a group and a channel holding each kind of credential and a secret variable; answers their ids. */
async function plant(s: TestService): Promise<{ check: string; group: number; channel: number }> {
  const group = await s.request('POST', '/v1/check-groups', {
    name: 'g',
    activated: false,
    apiCheckDefaults: { basicAuth: { username: 'u', password: GROUP_PASSWORD } },
  });
  expect(group.statusCode, group.body).toBe(201);
  const check = await s.request('POST', '/v1/checks/api', {
    name: 'api',
    activated: false,
    request: {
      url: 'https://example.com',
      headers: [{ key: 'Authorization', value: TOKEN }],
      basicAuth: { username: 'u', password: PASSWORD },
    },
    environmentVariables: [{ key: 'S', value: SECRET_VARIABLE, secret: true }],
  });
  expect(check.statusCode, check.body).toBe(201);
  const channel = await s.request('POST', '/v1/alert-channels', {
    type: 'OPSGENIE',
    config: { name: 'ops', apiKey: INTEGRATION_KEY, region: 'US', priority: 'P3' },
  });
  expect(channel.statusCode, channel.body).toBe(201);
  return { check: check.json().id, group: group.json().id, channel: channel.json().id };
}

/** Every answer that shows the planted resources, as `headers` reads them. */
async function answers(
  s: TestService,
  ids: Awaited<ReturnType<typeof plant>>,
  headers: Record<string, string>,
) {
  const read = async (url: string) => {
    const res = await s.app.inject({ method: 'GET', url, headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.body;
  };
  return [
    await read(`/v1/checks/${ids.check}`),
    await read('/v1/checks'),
    await read(`/v1/check-groups/${ids.group}`),
    await read('/v1/check-groups'),
    await read(`/v1/alert-channels/${ids.channel}`),
    await read('/v1/alert-channels'),
  ].join('\n');
}

describe('credentials in answers', () => {
  it('are masked by default', async () => {
    svc = await testService();
    const ids = await plant(svc);
    const text = await answers(svc, ids, svc.auth());
    for (const planted of [PASSWORD, TOKEN, GROUP_PASSWORD, INTEGRATION_KEY, SECRET_VARIABLE]) {
      expect(text).not.toContain(planted);
    }
    expect(text).toContain('*****');
  });

  it('with OUTPOST_API_CREDENTIALS=clear, are answered to an API key as stored; a secret variable never is', async () => {
    svc = await testService({ apiCredentials: 'clear' });
    const ids = await plant(svc);
    const text = await answers(svc, ids, svc.auth());
    for (const planted of [PASSWORD, TOKEN, GROUP_PASSWORD, INTEGRATION_KEY]) expect(text).toContain(planted);
    expect(text).not.toContain(SECRET_VARIABLE);
    // What is read can be sent back as it is: nothing changes.
    const check = (await svc.request('GET', `/v1/checks/${ids.check}`)).json();
    const again = await svc.request('PUT', `/v1/checks/api/${ids.check}`, check);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().request.basicAuth.password).toBe(PASSWORD);
    expect(again.json().environmentVariables[0].value).toBe('*****');
    // Account B's key sees none of account A's.
    const other = await svc.app.inject({ method: 'GET', url: '/v1/checks', headers: svc.auth('B') });
    expect(other.body).not.toContain(PASSWORD);
  });

  it('with OUTPOST_API_CREDENTIALS=clear, are still masked for the web app', async () => {
    svc = await testService({ apiCredentials: 'clear' });
    const ids = await plant(svc);
    const signIn = await svc.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ apiKey: svc.accountA.key }),
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    const setCookie = [signIn.headers['set-cookie']].flat().find((c) => c?.startsWith('outpost_session='));
    const text = await answers(svc, ids, { cookie: setCookie!.split(';')[0]! });
    for (const planted of [PASSWORD, TOKEN, GROUP_PASSWORD, INTEGRATION_KEY, SECRET_VARIABLE]) {
      expect(text).not.toContain(planted);
    }
  });
});
