import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestService, testService } from '../../../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await testService();
});
afterAll(async () => svc.close());

describe('GET /openapi.json', () => {
  it('serves an OpenAPI 3.1 document that a real validator accepts', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const { createConfig, lintFromString } = await import('@redocly/openapi-core');
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      config: await createConfig({ extends: ['minimal'] }),
    });
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors.map((e) => `${e.ruleId}: ${e.message} at ${e.location[0]?.pointer}`)).toEqual([]);
  });

  it('marks operations the spec does not list and keeps the ones it does unmarked', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/checks/icmp'].post['x-outpost-not-in-spec']).toBeUndefined();
    expect(doc.paths['/v1/checks/{id}'].put['x-outpost-not-in-spec']).toBeUndefined();
    expect(doc.paths['/v1/checks/{id}'].get['x-outpost-not-in-spec']).toBe(true);
    expect(doc.paths['/v1/agent/jobs/claim'].post['x-outpost-not-in-spec']).toBe(true);
    expect(doc.paths['/v1/checks/api'].post['x-outpost-not-in-spec']).toBe(true);
    const upload = doc.paths['/v1/agent/jobs/{jobId}/artifacts/{name}'].put;
    expect(upload['x-outpost-not-in-spec']).toBe(true);
    expect(Object.keys(upload.requestBody.content)).toEqual(['application/octet-stream']);
    expect(Object.keys(upload.responses)).toEqual(
      expect.arrayContaining(['201', '409', '411', '413', '415']),
    );
    const download = doc.paths['/v1/check-results/{checkId}/{checkResultId}/artifacts/{name}'].get;
    expect(download['x-outpost-not-in-spec']).toBe(true);
    expect(Object.keys(download.responses['200'].content)).toEqual(['application/octet-stream']);
    expect(doc.paths['/v1/checks/icmp'].post.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/Error',
    );
  });
});
