import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorReporter } from '../../src/agent/error-reporter.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { VERSION } from '../../src/common/paths.js';
import { memoryLogger, TEST_API_KEY, TestService } from './helpers.js';

describe('ErrorReporter', () => {
  let service: TestService;
  let client: ServiceClient;

  beforeEach(async () => {
    service = await new TestService().start();
    client = new ServiceClient({ serviceUrl: service.url, apiKey: TEST_API_KEY, agentId: 'agent-1' });
  });
  afterEach(async () => {
    await client.close();
    await service.close();
  });

  const reporter = (options: { enabled?: boolean; maxPerMinute?: number } = {}) => {
    const log = memoryLogger();
    return {
      log,
      reporter: new ErrorReporter({
        client,
        enabled: options.enabled ?? true,
        apiKey: TEST_API_KEY,
        logger: log.logger,
        ...options,
      }),
    };
  };

  it('sends message, stack, agent version, platform and runtime version, and nothing else', async () => {
    const { reporter: r } = reporter();
    const err = new RangeError('socket exploded');

    await r.report(err);

    const [event] = service.received('event');
    expect(Object.keys(event?.body as object).sort()).toEqual([
      'agentVersion',
      'message',
      'platform',
      'runtimeVersion',
      'stack',
    ]);
    expect(event?.body).toMatchObject({
      message: 'RangeError: socket exploded',
      agentVersion: VERSION,
      platform: `${process.platform}-${process.arch}`,
      runtimeVersion: process.version,
    });
    expect((event?.body as { stack?: string } | undefined)?.stack).toContain('error-reporter.test.ts');
  });

  it('scrubs the API key in every form, tokens, URLs and e-mail addresses', () => {
    const { reporter: r } = reporter();
    const text = [
      `key ${TEST_API_KEY}`,
      `encoded ${Buffer.from(TEST_API_KEY).toString('base64')}`,
      'other pl_ffffffffffffffffffffffffffffffff',
      'header Bearer abc.def-ghi',
      'fetch https://user:pw@api.example.com/v1?token=1 failed',
      'mail ops@example.com',
      'at run (file:///app/dist/src/agent/agent.js:10:5)',
      'at node:internal/process/task_queues:95:5',
      'in node_modules/undici@7.30.2/lib',
    ].join('\n');

    const scrubbed = r.scrub(text);

    expect(scrubbed).toBe(
      [
        'key *****',
        'encoded *****',
        'other *****',
        'header *****',
        'fetch ***** failed',
        'mail *****',
        'at run (file:///app/dist/src/agent/agent.js:10:5)',
        'at node:internal/process/task_queues:95:5',
        'in node_modules/undici@7.30.2/lib',
      ].join('\n'),
    );
  });

  it('scrubs the key from what it sends', async () => {
    const { reporter: r } = reporter();

    await r.report(new Error(`login with ${TEST_API_KEY} refused`));

    const sent = JSON.stringify(service.received('event')[0]?.body);
    expect(sent).not.toContain(TEST_API_KEY);
    expect(sent).toContain('login with ***** refused');
  });

  it('sends at most maxPerMinute reports', async () => {
    const { reporter: r, log } = reporter({ maxPerMinute: 3 });

    await Promise.all(Array.from({ length: 5 }, (_, i) => r.report(new Error(`e${i}`))));

    expect(service.received('event')).toHaveLength(3);
    expect(log.lines.filter((l) => l.msg === 'error report dropped: rate limit')).toHaveLength(2);
  });

  it('swallows a failed report and logs it at debug', async () => {
    service.handlers.event = () => 'drop';
    const { reporter: r, log } = reporter();

    await expect(r.report(new Error('x'))).resolves.toBeUndefined();

    expect(log.lines.find((l) => l.msg === 'error report not sent')).toMatchObject({ level: 20 });
  });

  it('sends nothing when EXTERNAL_OBSERVABILITY is off', async () => {
    const { reporter: r } = reporter({ enabled: false });

    await r.report(new Error('x'));
    await r.close();

    expect(service.received('event')).toHaveLength(0);
  });
});
