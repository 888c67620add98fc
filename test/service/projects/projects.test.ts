import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestService, testService } from '../../helpers/service.js';

/** A webhook secret planted in the deploys: no answer may show it. */
const SECRET = 'planted-webhook-secret-4b1d';

/** A deploy body as `checkly deploy` sends it (constructs synthesized, `{ref}` between them). */
function deployBody(
  options: { apiName?: string; withTcp?: boolean; extra?: Record<string, unknown>[]; project?: string } = {},
) {
  const { apiName = 'Deployed API', withTcp = true, extra = [], project = 'unit-project' } = options;
  const resources: Record<string, unknown>[] = [
    {
      logicalId: 'group',
      type: 'check-group',
      member: true,
      payload: {
        name: 'Deployed group',
        activated: true,
        locations: [],
        tags: ['unit'],
        apiCheckDefaults: {
          headers: [],
          queryParameters: [],
          url: '',
          basicAuth: { username: '', password: '' },
        },
        environmentVariables: [],
        v: 2,
      },
    },
    {
      logicalId: 'api',
      type: 'check',
      member: true,
      payload: {
        name: apiName,
        checkType: 'API',
        frequency: 10,
        groupId: { ref: 'group' },
        request: { method: 'GET', url: 'https://example.com/health', assertions: [] },
      },
    },
    ...(withTcp
      ? [
          {
            logicalId: 'tcp',
            type: 'check',
            member: true,
            payload: {
              name: 'Deployed TCP',
              checkType: 'TCP',
              frequency: 10,
              request: { hostname: 'example.com', port: 443 },
            },
          },
        ]
      : []),
    {
      logicalId: 'hook',
      type: 'alert-channel',
      member: true,
      payload: {
        type: 'WEBHOOK',
        config: {
          name: 'Deployed hook',
          url: 'https://hooks.example.com/x',
          method: 'POST',
          webhookSecret: SECRET,
        },
      },
    },
    {
      logicalId: 'check-alert-channel-subscription#api#hook',
      type: 'alert-channel-subscription',
      member: true,
      payload: { alertChannelId: { ref: 'hook' }, checkId: { ref: 'api' }, activated: true },
    },
    ...extra,
  ];
  return { project: { logicalId: project, name: 'Unit project', repoUrl: null }, resources, sharedFiles: [] };
}

describe('projects (docs/api.md, "Projects (monitoring as code)")', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await testService();
  });
  afterAll(() => svc.close());

  const deploy = (body: unknown, query = 'dryRun=false&scheduleOnDeploy=true', account: 'A' | 'B' = 'A') =>
    svc.app.inject({
      method: 'POST',
      url: `/next-v2/projects/deploy?${query}`,
      headers: { ...svc.auth(account), 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync(JSON.stringify(body)),
    });
  const checks = async (account: 'A' | 'B' = 'A') =>
    (await svc.request('GET', '/v1/checks?limit=100', undefined, account)).json() as {
      id: string;
      name: string;
      groupId: number | null;
      alertChannelSubscriptions: { alertChannelId: number }[];
    }[];

  beforeEach(async () => {
    for (const account of ['A', 'B'] as const) {
      for (const project of (await svc.request('GET', '/next/projects', undefined, account)).json() as {
        logicalId: string;
      }[]) {
        await svc.request('DELETE', `/next/projects/${project.logicalId}`, undefined, account);
      }
      for (const check of await checks(account))
        await svc.request('DELETE', `/v1/checks/${check.id}`, undefined, account);
    }
  });

  it('a gzip deploy creates every resource, resolving refs and folding subscriptions; a redeploy updates by logical id', async () => {
    const first = await deploy(deployBody());
    expect(first.statusCode, first.body).toBe(200);
    expect(first.body).not.toContain(SECRET);
    const diff = first.json().diff as {
      type: string;
      logicalId: string;
      physicalId: unknown;
      action: string;
    }[];
    expect(diff.map((d) => `${d.action} ${d.type} ${d.logicalId}`)).toEqual([
      'CREATE alert-channel hook',
      'CREATE check-group group',
      'CREATE check api',
      'CREATE check tcp',
      'CREATE alert-channel-subscription check-alert-channel-subscription#api#hook',
    ]);
    const hookId = diff.find((d) => d.logicalId === 'hook')!.physicalId;
    const groupId = diff.find((d) => d.logicalId === 'group')!.physicalId;
    const created = await checks();
    const api = created.find((c) => c.name === 'Deployed API')!;
    expect(api).toMatchObject({
      groupId,
      alertChannelSubscriptions: [{ alertChannelId: hookId, activated: true }],
    });
    expect(created.find((c) => c.name === 'Deployed TCP')!.alertChannelSubscriptions).toEqual([]);

    const second = await deploy(deployBody({ apiName: 'Renamed API', withTcp: false }));
    expect(second.statusCode, second.body).toBe(200);
    const actions = (second.json().diff as { action: string; logicalId: string; physicalId: unknown }[]).map(
      (d) => `${d.action} ${d.logicalId}`,
    );
    expect(actions).toContain('UPDATE api');
    expect(actions).toContain('DELETE tcp');
    const after = await checks();
    expect(after.map((c) => c.name).sort()).toEqual(['Renamed API']);
    expect(after[0]!.id).toBe(api.id);
    const project = await svc.request('GET', '/next/projects/unit-project');
    expect(project.json()).toMatchObject({ logicalId: 'unit-project', name: 'Unit project', repoUrl: null });
    expect(project.json().updated_at).not.toBeNull();
  });

  it('an uncompressed deploy works too; dryRun answers the diff and changes nothing', async () => {
    const preview = await svc.app.inject({
      method: 'POST',
      url: '/next-v2/projects/deploy?dryRun=true',
      headers: svc.auth(),
      payload: deployBody(),
    });
    expect(preview.statusCode, preview.body).toBe(200);
    expect((preview.json().diff as { action: string }[]).every((d) => d.action === 'CREATE')).toBe(true);
    expect(await checks()).toEqual([]);
    expect((await svc.request('GET', '/next/projects/unit-project')).statusCode).toBe(404);
  });

  it('is all or nothing: a failing resource names its logical id and field, and undoes what the deploy did', async () => {
    expect((await deploy(deployBody())).statusCode).toBe(200);
    const before = await checks();
    const bad = {
      logicalId: 'broken-url',
      type: 'check',
      member: true,
      payload: { name: 'Broken', checkType: 'URL', frequency: 7, request: { url: 'https://example.com' } },
    };
    const res = await deploy(deployBody({ apiName: 'Should not stay', extra: [bad] }));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('resource check "broken-url"');
    expect(res.json().attributes).toMatchObject({
      logicalId: 'broken-url',
      resourceType: 'check',
      field: 'frequency',
    });
    const after = await checks();
    expect(after.map((c) => [c.id, c.name]).sort()).toEqual(before.map((c) => [c.id, c.name]).sort());

    // A first deploy that fails leaves no resource and no project.
    const fresh = await deploy(deployBody({ project: 'never-made', extra: [bad] }));
    expect(fresh.statusCode).toBe(400);
    expect((await svc.request('GET', '/next/projects/never-made')).statusCode).toBe(404);
    expect((await checks()).length).toBe(before.length);
    const groups = (await svc.request('GET', '/v1/check-groups')).json() as unknown[];
    expect(groups.length).toBe(1);
  });

  it('refuses a construct type Outpost lacks, and a ref to nothing, before changing anything', async () => {
    const unknown = await deploy(
      deployBody({ extra: [{ logicalId: 'x', type: 'agentic-thing', member: true, payload: {} }] }),
    );
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toContain('construct type "agentic-thing"');
    expect(unknown.json().attributes).toMatchObject({ logicalId: 'x', field: 'type' });
    expect(await checks()).toEqual([]);

    const body = deployBody();
    (body.resources[1]!.payload as Record<string, unknown>).groupId = { ref: 'missing-group' };
    const dangling = await deploy(body);
    expect(dangling.statusCode).toBe(400);
    expect(dangling.json().attributes).toMatchObject({ logicalId: 'api', field: 'groupId', rule: 'ref' });
    expect(await checks()).toEqual([]);
  });

  it('bounds gzip bodies: a zip bomb is a 413, a broken stream a 400, another encoding a 415', async () => {
    const bomb = gzipSync(Buffer.alloc(30 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(100_000);
    const headers = { ...svc.auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' };
    const big = await svc.app.inject({
      method: 'POST',
      url: '/next-v2/projects/deploy',
      headers,
      payload: bomb,
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().attributes.code).toBe('OUTPOST_ERR_PAYLOAD_TOO_LARGE');
    const broken = await svc.app.inject({
      method: 'POST',
      url: '/next-v2/projects/deploy',
      headers,
      payload: Buffer.from('not gzip at all'),
    });
    expect(broken.statusCode).toBe(400);
    const brotli = await svc.app.inject({
      method: 'POST',
      url: '/next-v2/projects/deploy',
      headers: { ...headers, 'content-encoding': 'br' },
      payload: Buffer.from('{}'),
    });
    expect(brotli.statusCode).toBe(415);
    expect(await checks()).toEqual([]);
  });

  it('projects are per account; create is 409 on a taken logical id; delete removes resources unless preserved', async () => {
    expect((await deploy(deployBody())).statusCode).toBe(200);
    expect((await svc.request('GET', '/next/projects/unit-project', undefined, 'B')).statusCode).toBe(404);
    expect((await svc.request('DELETE', '/next/projects/unit-project', undefined, 'B')).statusCode).toBe(404);
    expect((await svc.request('GET', '/next/projects', undefined, 'B')).json()).toEqual([]);

    const made = await svc.request('POST', '/next/projects', { logicalId: 'empty', name: 'Empty' });
    expect(made.statusCode).toBe(201);
    const again = await svc.request('POST', '/next/projects', { logicalId: 'empty', name: 'Empty' });
    expect(again.statusCode).toBe(409);
    expect(again.json().attributes.code).toBe('OUTPOST_ERR_PROJECT_EXISTS');
    const listed = (await svc.request('GET', '/next/projects')).json() as { logicalId: string }[];
    expect(listed.map((p) => p.logicalId)).toEqual(['unit-project', 'empty']);

    const kept = await svc.request('DELETE', '/next/projects/unit-project?preserveResources=true');
    expect(kept.statusCode).toBe(204);
    expect((await checks()).length).toBe(2);
    expect((await svc.request('GET', '/next/projects/unit-project')).statusCode).toBe(404);

    // Deployed again, the project starts a new map: a plain delete removes what it made, not the kept ones.
    expect((await deploy(deployBody({ project: 'second' }))).statusCode).toBe(200);
    expect((await checks()).length).toBe(4);
    expect((await svc.request('DELETE', '/next/projects/second')).statusCode).toBe(204);
    expect((await checks()).length).toBe(2);
    const channels = (await svc.request('GET', '/v1/alert-channels')).json() as unknown[];
    expect(channels.length).toBe(1);
    expect(JSON.stringify(channels)).not.toContain(SECRET);
  });

  it('deploys private locations with their check assignments, and dashboards; a project delete removes them', async () => {
    const extra = [
      {
        logicalId: 'pl',
        type: 'private-location',
        member: true,
        payload: { name: 'Deployed PL', slugName: 'deployed-pl', icon: 'location' },
      },
      {
        logicalId: 'private-location-check-assignment#tcp#pl',
        type: 'private-location-check-assignment',
        member: true,
        payload: { privateLocationId: { ref: 'pl' }, checkId: { ref: 'tcp' } },
      },
      {
        logicalId: 'board',
        type: 'dashboard',
        member: true,
        payload: { header: 'Deployed board', customUrl: 'deployed-board-unit', tags: ['unit'] },
      },
    ];
    const res = await deploy(deployBody({ project: 'placed', extra }));
    expect(res.statusCode, res.body).toBe(200);
    const tcp = (await checks()).find((c) => c.name === 'Deployed TCP') as unknown as {
      privateLocations: string[];
    };
    expect(tcp.privateLocations).toEqual(['deployed-pl']);
    const boards = (await svc.request('GET', '/v1/dashboards')).json() as { header: string }[];
    expect(boards.map((b) => b.header)).toEqual(['Deployed board']);
    expect((await svc.request('DELETE', '/next/projects/placed')).statusCode).toBe(204);
    expect((await svc.request('GET', '/v1/dashboards')).json()).toEqual([]);
    expect((await svc.request('GET', '/v1/private-locations')).json()).toEqual([]);
    expect(await checks()).toEqual([]);
  });
});
