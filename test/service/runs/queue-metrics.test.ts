import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  claimJobs,
  createCheck,
  icmpBody,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

let svc: TestService;
beforeEach(async () => {
  svc = await testService();
});
afterEach(async () => {
  await svc.close();
});

/** The samples of `GET /metrics` as `name{labels} value` lines, comments left out. */
function samples(text: string): string[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('GET /metrics (the queue, for autoscalers)', () => {
  it('counts the jobs queued per run location of the account, and drops those claimed', async () => {
    const parallel = await createCheck(
      svc,
      'icmp',
      icmpBody({ activated: false, runParallel: true, locations: ['eu-west-1', 'us-east-1'] }),
    );
    const single = await createCheck(svc, 'icmp', icmpBody({ activated: false, locations: ['eu-west-1'] }));
    await triggerCheck(svc, parallel);
    await triggerCheck(svc, single);
    const res = await svc.request('GET', '/metrics');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE outpost_service_queued_jobs gauge');
    const lines = samples(res.body);
    expect(lines).toContain('outpost_service_queued_jobs{location="eu-west-1"} 2');
    expect(lines).toContain('outpost_service_queued_jobs{location="us-east-1"} 1');
    const oldest = lines.find((line) =>
      line.startsWith('outpost_service_queue_oldest_seconds{location="eu-west-1"}'),
    );
    expect(Number(oldest?.split(' ')[1])).toBeGreaterThanOrEqual(0);
    expect(Number(oldest?.split(' ')[1])).toBeLessThan(60);

    // Claimed jobs are no longer waiting.
    const claimed = await claimJobs(svc, '6f0c3a52-4f5e-4d53-9d57-0d7e55a1f001');
    expect(claimed).toHaveLength(3);
    expect(samples((await svc.request('GET', '/metrics')).body)).toEqual([]);
  });

  it("answers an account's own queues only, and needs a key", async () => {
    const check = await createCheck(svc, 'icmp', icmpBody({ activated: false, locations: ['eu-west-1'] }));
    await triggerCheck(svc, check);
    expect(samples((await svc.request('GET', '/metrics', undefined, 'B')).body)).toEqual([]);
    const anonymous = await svc.app.inject({ method: 'GET', url: '/metrics' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).not.toContain('outpost_service_queued_jobs');
  });
});
