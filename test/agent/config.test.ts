import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseAgentConfig, redactAgentConfig } from '../../src/agent/config.js';
import { OutpostError } from '../../src/common/errors.js';

const REQUIRED = {
  API_KEY: 'pl_0123456789abcdef0123456789abcdef',
  SERVICE_URL: 'https://outpost.example.com',
};

function configError(env: NodeJS.ProcessEnv): OutpostError {
  try {
    parseAgentConfig(env);
  } catch (err) {
    if (err instanceof OutpostError) return err;
    throw err;
  }
  throw new Error('parseAgentConfig accepted a bad environment');
}

describe('parseAgentConfig', () => {
  it('applies every default when only the required variables are set', () => {
    const config = parseAgentConfig(REQUIRED);

    expect(config).toEqual({
      apiKey: REQUIRED.API_KEY,
      serviceUrl: 'https://outpost.example.com',
      jobConcurrency: 10,
      logLevel: 'INFO',
      healthPort: 8081,
      healthHost: '127.0.0.1',
      externalObservability: true,
      httpsProxy: null,
      httpProxy: null,
      noProxy: null,
      profile: 'full',
      shutdownGraceMs: 120_000,
      claimWaitSeconds: 20,
      useOsDnsResolver: false,
      networkTraces: true,
      browserConcurrency: availableParallelism(),
      browserMemoryPerCheckMiB: 300,
      chromiumPath: '/usr/bin/chromium',
      locations: null,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every variable when set to a good value', () => {
    const config = parseAgentConfig({
      ...REQUIRED,
      SERVICE_URL: 'http://127.0.0.1:3000/outpost/',
      JOB_CONCURRENCY: '1000',
      LOG_LEVEL: 'debug',
      AGENT_HEALTH_PORT: '0',
      AGENT_HEALTH_HOST: '0.0.0.0',
      EXTERNAL_OBSERVABILITY: 'OFF',
      HTTPS_PROXY: 'http://user:secret@proxy.internal:3128',
      HTTP_PROXY: 'http://proxy.internal:3128',
      NO_PROXY: 'localhost,.internal',
      AGENT_PROFILE: 'uptime',
      AGENT_SHUTDOWN_GRACE_SECONDS: '0',
      AGENT_CLAIM_WAIT_SECONDS: '0',
    });

    expect(config).toMatchObject({
      serviceUrl: 'http://127.0.0.1:3000/outpost',
      jobConcurrency: 1000,
      logLevel: 'DEBUG',
      healthPort: 0,
      healthHost: '0.0.0.0',
      externalObservability: false,
      httpsProxy: 'http://user:secret@proxy.internal:3128',
      httpProxy: 'http://proxy.internal:3128',
      noProxy: 'localhost,.internal',
      profile: 'uptime',
      shutdownGraceMs: 0,
      claimWaitSeconds: 0,
    });
  });

  it.each([
    ['LOG_LEVEL', 'LOG', { logLevel: 'LOG' }],
    ['LOG_LEVEL', 'WARN', { logLevel: 'WARN' }],
    ['LOG_LEVEL', 'ERROR', { logLevel: 'ERROR' }],
    ['JOB_CONCURRENCY', '1', { jobConcurrency: 1 }],
    ['AGENT_HEALTH_PORT', '65535', { healthPort: 65_535 }],
    ['AGENT_HEALTH_HOST', '::', { healthHost: '::' }],
    ['AGENT_HEALTH_HOST', '[::1]', { healthHost: '::1' }],
    ['AGENT_HEALTH_HOST', 'localhost', { healthHost: 'localhost' }],
    ['EXTERNAL_OBSERVABILITY', 'on', { externalObservability: true }],
    ['AGENT_PROFILE', 'full', { profile: 'full' }],
    ['AGENT_SHUTDOWN_GRACE_SECONDS', '3600', { shutdownGraceMs: 3_600_000 }],
    ['AGENT_CLAIM_WAIT_SECONDS', '20', { claimWaitSeconds: 20 }],
    ['USE_OS_DNS_RESOLVER', 'TRUE', { useOsDnsResolver: true }],
    ['USE_OS_DNS_RESOLVER', 'false', { useOsDnsResolver: false }],
    ['NETWORK_TRACES', 'OFF', { networkTraces: false }],
    ['NETWORK_TRACES', 'on', { networkTraces: true }],
    ['BROWSER_CONCURRENCY', '3', { browserConcurrency: 3 }],
    ['BROWSER_MEMORY_PER_CHECK_MIB', '650', { browserMemoryPerCheckMiB: 650 }],
    ['CHROMIUM_PATH', '/opt/chromium/chrome', { chromiumPath: '/opt/chromium/chrome' }],
    ['AGENT_LOCATIONS', 'eu-west-1', { locations: ['eu-west-1'] }],
    ['AGENT_LOCATIONS', ' us-east-1 , eu-west-1,us-east-1', { locations: ['us-east-1', 'eu-west-1'] }],
  ])('accepts %s=%s', (name, value, expected) => {
    expect(parseAgentConfig({ ...REQUIRED, [name]: value })).toMatchObject(expected);
  });

  it('treats an empty variable as unset', () => {
    const config = parseAgentConfig({ ...REQUIRED, JOB_CONCURRENCY: '', LOG_LEVEL: '  ', HTTPS_PROXY: '' });

    expect(config).toMatchObject({ jobConcurrency: 10, logLevel: 'INFO', httpsProxy: null });
  });

  it('reads the proxy variables in lower case too, upper case winning', () => {
    const config = parseAgentConfig({
      ...REQUIRED,
      https_proxy: 'http://lower.internal:1',
      HTTPS_PROXY: 'http://upper.internal:2',
      http_proxy: 'http://lower.internal:3',
      no_proxy: '127.0.0.1',
    });

    expect(config).toMatchObject({
      httpsProxy: 'http://upper.internal:2',
      httpProxy: 'http://lower.internal:3',
      noProxy: '127.0.0.1',
    });
  });

  it.each([
    ['SERVICE_URL', 'ftp://outpost.example.com', 'an http:// or https:// URL', '"ftp://outpost.example.com"'],
    ['SERVICE_URL', 'outpost.example.com', 'an http:// or https:// URL', '"outpost.example.com"'],
    ['JOB_CONCURRENCY', '0', 'an integer from 1 to 1000', '"0"'],
    ['JOB_CONCURRENCY', '1001', 'an integer from 1 to 1000', '"1001"'],
    ['JOB_CONCURRENCY', '2.5', 'an integer from 1 to 1000', '"2.5"'],
    ['JOB_CONCURRENCY', 'ten', 'an integer from 1 to 1000', '"ten"'],
    ['LOG_LEVEL', 'TRACE', 'one of DEBUG, LOG, INFO, WARN, ERROR', '"TRACE"'],
    ['AGENT_HEALTH_PORT', '65536', 'an integer port from 0 to 65535', '"65536"'],
    ['AGENT_HEALTH_PORT', '-1', 'an integer port from 0 to 65535', '"-1"'],
    ['AGENT_HEALTH_HOST', 'http://0.0.0.0', 'an IP address or a host name', '"http://0.0.0.0"'],
    ['AGENT_HEALTH_HOST', '0.0.0.0:8081', 'an IP address or a host name', '"0.0.0.0:8081"'],
    ['EXTERNAL_OBSERVABILITY', 'yes', 'on or off', '"yes"'],
    ['HTTPS_PROXY', 'proxy:3128', 'an http:// or https:// proxy URL', '"proxy:3128"'],
    ['HTTP_PROXY', 'socks5://proxy:1080', 'an http:// or https:// proxy URL', '"socks5://proxy:1080"'],
    ['AGENT_PROFILE', 'browser', 'full or uptime', '"browser"'],
    ['BROWSER_CONCURRENCY', '0', 'an integer from 1 to 64', '"0"'],
    ['BROWSER_MEMORY_PER_CHECK_MIB', '10', 'an integer number of MiB from 64 to 65536', '"10"'],
    ['CHROMIUM_PATH', 'chromium', 'an absolute path of a Chromium executable', '"chromium"'],
    ['AGENT_SHUTDOWN_GRACE_SECONDS', '3601', 'an integer number of seconds from 0 to 3600', '"3601"'],
    ['USE_OS_DNS_RESOLVER', '1', 'true or false', '"1"'],
    ['AGENT_CLAIM_WAIT_SECONDS', '21', 'an integer number of seconds from 0 to 20', '"21"'],
    ['AGENT_LOCATIONS', 'local', 'a comma-separated list of data-center location names', '"local"'],
    [
      'AGENT_LOCATIONS',
      'us-east-1,,eu-west-1',
      'a comma-separated list of data-center location names',
      '"us-east-1,,eu-west-1"',
    ],
  ])('refuses %s=%s, saying what it must be and what it was', (name, value, requirement, shown) => {
    const err = configError({ ...REQUIRED, [name]: value });

    expect(err.code).toBe('OUTPOST_ERR_CONFIG');
    expect(err.message).toContain(`${name} must be ${requirement}`);
    expect(err.message).toContain(`it was ${shown}`);
  });

  it('names each missing required variable', () => {
    const err = configError({});

    expect(err.message).toMatch(/API_KEY must be .*\(required\); it is not set/);
    expect(err.message).toMatch(/SERVICE_URL must be .*\(required\); it is not set/);
  });

  it('never prints the value of a bad API_KEY', () => {
    const err = configError({ ...REQUIRED, API_KEY: 'pl_secret value' });

    expect(err.message).toContain('API_KEY must be a non-empty key of printable characters without spaces');
    expect(err.message).toContain('it was a value of 15 characters (not shown)');
    expect(err.message).not.toContain('secret');
  });

  it('lists every bad variable at once', () => {
    const err = configError({ API_KEY: REQUIRED.API_KEY, JOB_CONCURRENCY: '0', LOG_LEVEL: 'LOUD' });

    const lines = err.message.split('\n').filter((l) => l.startsWith('- '));
    expect(lines.map((l) => l.split(' ')[1])).toEqual(['SERVICE_URL', 'JOB_CONCURRENCY', 'LOG_LEVEL']);
  });
});

describe('redactAgentConfig', () => {
  it('hides the API key and proxy passwords and keeps the rest', () => {
    const config = parseAgentConfig({ ...REQUIRED, HTTPS_PROXY: 'http://user:hunter2@proxy.internal:3128' });

    const view = redactAgentConfig(config);

    expect(view.apiKey).toBe('*****');
    expect(view.httpsProxy).toBe('http://user:*****@proxy.internal:3128/');
    expect(JSON.stringify(view)).not.toContain(REQUIRED.API_KEY);
    expect(JSON.stringify(view)).not.toContain('hunter2');
    expect(view.jobConcurrency).toBe(10);
  });
});
