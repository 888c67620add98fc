import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIME_IDS } from '../../../src/protocol/index.js';
import { loadRuntimes, RUNTIMES_DIR } from '../../../src/service/resources/runtimes/runtimes.js';
import { missingRequirement, runtimeRequirement } from '../../helpers/requirements.js';
import { type TestService, testService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

const get = (url: string, account: 'A' | 'B' = 'A') =>
  svc.app.inject({ method: 'GET', url, headers: svc.auth(account) });

describe('GET /v1/runtimes', () => {
  it('answers every runtime of the spec, newest first, each as its file says with the installed versions', async () => {
    const res = await get('/v1/runtimes');
    expect(res.statusCode).toBe(200);
    const runtimes = res.json() as { name: string }[];
    expect(runtimes.map((r) => r.name)).toEqual([...RUNTIME_IDS]);
    for (const runtime of runtimes) {
      const file = JSON.parse(readFileSync(join(RUNTIMES_DIR, runtime.name, 'runtime.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      const dependencies = Object.fromEntries(
        Object.entries(file.dependencies).map(([name, pin]) => {
          const installed = join(RUNTIMES_DIR, runtime.name, 'node_modules', name, 'package.json');
          return [name, existsSync(installed) ? JSON.parse(readFileSync(installed, 'utf8')).version : pin];
        }),
      );
      expect(runtime).toEqual({ ...file, dependencies });
    }
  });

  it.skipIf(missingRequirement([runtimeRequirement('2026.04')]))(
    "reports 2026.04's installed Playwright, which is the pinned 1.58.2",
    async () => {
      const runtime = (await get('/v1/runtimes/2026.04')).json() as { dependencies: Record<string, string> };
      expect(runtime.dependencies['@playwright/test']).toBe('1.58.2');
    },
  );

  it('marks 2026.04 current and only the runtimes the reference shows with multi-step support', async () => {
    const runtimes = (await get('/v1/runtimes')).json() as {
      name: string;
      stage: string;
      multiStepSupport: boolean;
    }[];
    const byName = Object.fromEntries(runtimes.map((r) => [r.name, r]));
    expect(byName['2026.04']).toMatchObject({
      stage: 'CURRENT',
      nodeJsVersion: '24',
      multiStepSupport: true,
    });
    expect(runtimes.filter((r) => !r.multiStepSupport).map((r) => r.name)).toEqual(['2023.02', '2022.10']);
    expect(runtimes.filter((r) => r.stage === 'CURRENT')).toHaveLength(1);
  });

  it('answers one runtime by name and 404 for an unknown one', async () => {
    const one = await get('/v1/runtimes/2024.09');
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({
      name: '2024.09',
      nodeJsVersion: '18',
      dependencies: { '@playwright/test': '1.48' },
    });
    const missing = await get('/v1/runtimes/2021.01');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });

  it('is the same for every account and needs the API key', async () => {
    expect((await get('/v1/runtimes', 'B')).json()).toEqual((await get('/v1/runtimes')).json());
    expect((await svc.app.inject({ method: 'GET', url: '/v1/runtimes' })).statusCode).toBe(401);
    expect((await svc.app.inject({ method: 'GET', url: '/v1/runtimes/2026.04' })).statusCode).toBe(401);
  });
});

describe('loadRuntimes', () => {
  let dir: string;
  const good = {
    name: '2026.04',
    stage: 'CURRENT',
    runtimeEndOfLife: '04/30/2028',
    nodeJsVersion: '24',
    multiStepSupport: true,
    description: 'd',
    dependencies: { axios: '1.13.2' },
  };
  const write = (folder: string, content: unknown) => {
    mkdirSync(join(dir, folder), { recursive: true });
    writeFileSync(
      join(dir, folder, 'runtime.json'),
      typeof content === 'string' ? content : JSON.stringify(content),
    );
    return join(dir, folder, 'runtime.json');
  };
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const fresh = () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-runtimes-'));
  };

  it('loads valid files and skips folders without runtime.json', () => {
    fresh();
    write('2026.04', good);
    mkdirSync(join(dir, 'notes'));
    expect(loadRuntimes(dir)).toEqual([good]);
  });

  it('reports the version installed under node_modules, else the pin', () => {
    fresh();
    write('2026.04', { ...good, dependencies: { axios: '1.13.2', lodash: '4.17.21', '@scope/pkg': '1.0' } });
    const installed = (name: string, content: string) => {
      mkdirSync(join(dir, '2026.04', 'node_modules', name), { recursive: true });
      writeFileSync(join(dir, '2026.04', 'node_modules', name, 'package.json'), content);
    };
    installed('axios', JSON.stringify({ name: 'axios', version: '1.13.3' }));
    installed('@scope/pkg', JSON.stringify({ name: '@scope/pkg', version: '1.0.7' }));
    expect(loadRuntimes(dir)).toEqual([
      { ...good, dependencies: { axios: '1.13.3', lodash: '4.17.21', '@scope/pkg': '1.0.7' } },
    ]);
  });

  it.each([
    ['an installed package.json that is not JSON', '{', /installed package file .*axios.*cannot be read/],
    [
      'an installed package.json without a version',
      '{"name":"axios"}',
      /installed package file .*axios.*has no version/,
    ],
  ])('stops with an error naming the installed file for %s', (_label, content, message) => {
    fresh();
    write('2026.04', good);
    mkdirSync(join(dir, '2026.04', 'node_modules', 'axios'), { recursive: true });
    writeFileSync(join(dir, '2026.04', 'node_modules', 'axios', 'package.json'), content);
    expect(() => loadRuntimes(dir)).toThrow(message);
  });

  it.each([
    ['text that is not JSON', '{ "name": ', /is not JSON/],
    ['an unknown stage', { ...good, stage: 'GA' }, /stage must be one of/],
    ['a date not written month/day/year', { ...good, runtimeEndOfLife: '2028-04-30' }, /runtimeEndOfLife/],
    ['a missing nodeJsVersion', { ...good, nodeJsVersion: undefined }, /nodeJsVersion is required/],
    ['a non-string dependency version', { ...good, dependencies: { axios: 1 } }, /dependencies\.axios/],
    ['an unknown field', { ...good, extra: true }, /extra is not a known field/],
    ['a name that is not its folder', { ...good, name: '2025.04' }, /must be its folder's name/],
  ])('stops with an error naming the file for %s', (_label, content, message) => {
    fresh();
    const file = write('2026.04', content);
    let error: unknown;
    try {
      loadRuntimes(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'OUTPOST_ERR_CONFIG' });
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(message);
  });
});
