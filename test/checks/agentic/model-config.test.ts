import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { modelEndpointFromEnv } from '../../../src/checks/agentic/index.js';

/** The agent's model variables: OUTPOST_AGENT_MODEL_URL, OUTPOST_AGENT_MODEL, the key or its file. */
const dir = mkdtempSync(join(tmpdir(), 'outpost-model-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('model endpoint configuration', () => {
  it('no URL: no model', () => {
    expect(modelEndpointFromEnv({})).toBeNull();
    expect(modelEndpointFromEnv({ OUTPOST_AGENT_MODEL_URL: '  ', OUTPOST_AGENT_MODEL: 'x' })).toBeNull();
  });

  it('the URL, the model and the key (or its file)', () => {
    expect(
      modelEndpointFromEnv({
        OUTPOST_AGENT_MODEL_URL: 'http://127.0.0.1:11434/v1/',
        OUTPOST_AGENT_MODEL: 'qwen3',
      }),
    ).toEqual({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3', apiKey: null });
    const file = join(dir, 'key');
    writeFileSync(file, 'sk-from-a-file\n');
    expect(
      modelEndpointFromEnv({
        OUTPOST_AGENT_MODEL_URL: 'https://models.example/v1',
        OUTPOST_AGENT_MODEL: 'm',
        OUTPOST_AGENT_MODEL_API_KEY_FILE: file,
      })?.apiKey,
    ).toBe('sk-from-a-file');
  });

  it.each([
    [
      { OUTPOST_AGENT_MODEL_URL: 'ftp://x/v1', OUTPOST_AGENT_MODEL: 'm' },
      /OUTPOST_AGENT_MODEL_URL must be an http/,
    ],
    [
      { OUTPOST_AGENT_MODEL_URL: 'not a url', OUTPOST_AGENT_MODEL: 'm' },
      /OUTPOST_AGENT_MODEL_URL must be an http/,
    ],
    [{ OUTPOST_AGENT_MODEL_URL: 'http://x/v1' }, /OUTPOST_AGENT_MODEL must name the model/],
    [
      {
        OUTPOST_AGENT_MODEL_URL: 'http://x/v1',
        OUTPOST_AGENT_MODEL: 'm',
        OUTPOST_AGENT_MODEL_API_KEY: 'sk-secret-in-env',
        OUTPOST_AGENT_MODEL_API_KEY_FILE: '/nonexistent',
      },
      /both set/,
    ],
    [
      {
        OUTPOST_AGENT_MODEL_URL: 'http://x/v1',
        OUTPOST_AGENT_MODEL: 'm',
        OUTPOST_AGENT_MODEL_API_KEY_FILE: '/nonexistent',
      },
      /OUTPOST_AGENT_MODEL_API_KEY_FILE must name a readable file/,
    ],
  ])('refuses %o', (env, message) => {
    let thrown: unknown;
    try {
      modelEndpointFromEnv(env);
    } catch (err) {
      thrown = err;
    }
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as { code?: string }).code).toBe('OUTPOST_ERR_CONFIG');
    expect((thrown as Error).message).not.toContain('sk-secret-in-env');
  });
});
