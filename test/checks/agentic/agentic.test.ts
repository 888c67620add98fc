import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Value } from '@sinclair/typebox/value';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../../src/browser/pool.js';
import { BrowserRunner } from '../../../src/browser/runner-process.js';
import { AgenticExecutor, NO_MODEL_MESSAGE } from '../../../src/checks/agentic/index.js';
import { type Job, type RunOutcome, RunOutcomeSchema } from '../../../src/protocol/index.js';
import { unzip } from '../../browser/formats.js';
import {
  type ChatCompletionsServer,
  type RecordedRequest,
  type ScriptedReply,
  shownText,
  startChatCompletionsServer,
} from '../../helpers/chat-completions-server.js';
import { processesUnder } from '../../helpers/processes.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../../helpers/requirements.js';
import { expectNoSecret } from '../../helpers/secrets.js';
import { type AgenticSite, startSite } from './site.js';

/**
 * AGENTIC checks end to end on real parts: a real pool (Chromium, runners as run users), a loopback
 * site whose markup changes between runs, and a loopback chat-completions server playing the model
 * from a scripted conversation. Generate → replay with no model call → markup change → verified
 * repair → a genuine content failure with no model call; no model configured; every misbehaviour of
 * the model; a planted secret that must appear nowhere.
 */
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement('2026.04')]);

const USER = 'alice';
const PASSWORD = 'Pl4nted-s3cret-Passw0rd!';
const NOT_NAMED = 'not-named-variable-value-7731';
const PROMPT =
  'Open {{SITE}}/login, sign in as {{USER}} with the password {{PASSWORD}}, and check that the dashboard greets the user by name.';

let site: AgenticSite;
let model: ChatCompletionsServer;
let root: string;
let pool: BrowserPool<BrowserRunner>;
let agentic: AgenticExecutor;
let noModel: AgenticExecutor;
const logText: string[] = [];
const artifactText: string[] = [];
const results: RunOutcome[] = [];
let jobs = 0;

const logger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk, _enc, done) {
      logText.push(String(chunk));
      done();
    },
  }),
);

function job(
  request: { script: string | null; scriptVersion: number; maxModelCalls?: number },
  timeoutMs = 120_000,
): Job {
  return {
    jobId: `00000000-0000-4000-8000-${String(++jobs).padStart(12, '0')}`,
    accountId: '00000000-0000-4000-8000-00000000000a',
    check: {
      id: '00000000-0000-4000-8000-00000000000c',
      name: 'sign in',
      checkType: 'AGENTIC',
      request: {
        prompt: PROMPT,
        script: request.script,
        scriptVersion: request.scriptVersion,
        repairMode: 'AUTO',
        skills: [],
        maxModelCalls: request.maxModelCalls ?? 20,
      },
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: '2026.04',
    },
    environmentVariables: [
      { key: 'SITE', value: site.origin, secret: false },
      { key: 'USER', value: USER, secret: false },
      { key: 'PASSWORD', value: PASSWORD, secret: true },
      // Not named in the prompt: the service would not send it; the agent must not pass it on either.
      { key: 'OTHER_TOKEN', value: NOT_NAMED, secret: false },
    ],
    runLocation: 'lab',
    runSource: 'TRIGGER_API',
    checkSessionId: null,
    attempt: 1,
    timeoutMs,
    leaseMs: 300_000,
  };
}

/** Runs a job as the dispatcher does and keeps its result, logs and artifacts for the secret search. */
async function run(executor: AgenticExecutor, j: Job): Promise<RunOutcome> {
  let release: () => Promise<void> = async () => {};
  const outcome = await executor.run(j, {
    signal: AbortSignal.timeout(j.timeoutMs),
    log: logger,
    attachArtifacts: (files, done) => {
      for (const f of files) {
        const bytes = readFileSync(f.path);
        artifactText.push(bytes.toString('latin1'));
        if (f.name.endsWith('.zip'))
          for (const entry of unzip(bytes).values()) artifactText.push(entry.toString('latin1'));
      }
      release = done;
    },
  });
  await release();
  // Every result fits the protocol's bounds (the service would reject one that did not).
  const problems = [...Value.Errors(RunOutcomeSchema, outcome)]
    .slice(0, 3)
    .map((e) => `${e.path} ${e.message}`);
  expect(problems).toEqual([]);
  results.push(outcome);
  return outcome;
}

/** A responder playing one conversation: the `i`-th reply of the conversation for its `i`-th request. */
function conversation(replies: Array<ScriptedReply | ((r: RecordedRequest) => ScriptedReply)>) {
  const start = model.requests.length;
  model.respond((request, index) => {
    const reply = replies[Math.min(index - start, replies.length - 1)] as
      | ScriptedReply
      | ((r: RecordedRequest) => ScriptedReply);
    return typeof reply === 'function' ? reply(request) : reply;
  });
}

const call = (name: string, args: Record<string, unknown> | string): ScriptedReply => ({
  toolCalls: [{ name, arguments: args }],
});
const FINISH = call('finish', {
  passed: true,
  summary: 'Signed in; the dashboard greets alice.',
  assertions: [
    { condition: 'the dashboard greets the user by name', passed: true, actual: 'Welcome, alice' },
  ],
});
const SIGN_IN: ScriptedReply[] = [
  call('navigate', { url: '{{SITE}}/login' }),
  call('fill', { target: { label: 'Username' }, value: '{{USER}}' }),
  call('fill', { target: { label: 'Password' }, value: '{{PASSWORD}}' }),
  call('click', { target: { role: 'button', name: 'Sign in' } }),
  call('verify_text_visible', { text: 'Welcome, {{USER}}' }),
  FINISH,
];

let generated = '';
let repaired = '';

describe.skipIf(skip !== null)('agentic checks: generate, replay, repair', () => {
  beforeAll(async () => {
    site = await startSite(USER, PASSWORD);
    model = await startChatCompletionsServer(() => ({ text: 'no conversation scripted' }));
    root = mkdtempSync(join(tmpdir(), 'outpost-agentic-'));
    chmodSync(root, 0o755);
    pool = new BrowserPool<BrowserRunner>({
      createRunner: (options) => BrowserRunner.spawn(options),
      tmpRoot: root,
      browserConcurrency: 2,
      readHeadroom: async () => null,
    });
    const endpoint = {
      baseUrl: model.baseUrl,
      model: 'scripted-model',
      apiKey: 'model-key-never-in-a-runner',
      callTimeoutMs: 2_000,
    };
    agentic = new AgenticExecutor({ pool, model: endpoint, tmpRoot: root });
    noModel = new AgenticExecutor({ pool, model: null, tmpRoot: root });
    expect((await pool.checkRuntime('2026.04')).ok).toBe(true);
  }, 90_000);

  afterAll(async () => {
    await agentic?.close();
    await noModel?.close();
    await pool?.close();
    await model?.close();
    await site?.close();
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  it('GENERATE: explores, writes a script from the tool calls and verifies it as a browser check', async () => {
    conversation(SIGN_IN);
    const before = model.requests.length;
    const outcome = await run(agentic, job({ script: null, scriptVersion: 0 }));
    const result = outcome.agenticCheckResult;
    expect(outcome.status, `${outcome.errorMessage} ${JSON.stringify(result?.errors)}`).toBe('PASSED');
    expect(result?.mode).toBe('GENERATE');
    expect(result?.modelUsage).toMatchObject({ model: 'scripted-model', calls: 6 });
    expect(result?.modelUsage.promptTokens).toBeGreaterThan(0);
    expect(model.requests.length - before).toBe(6);
    const change = result?.scriptChange;
    expect(change).toMatchObject({ kind: 'GENERATED', baseVersion: 0, verified: true });
    generated = change?.script ?? '';
    const env = (name: string) => `\${process.env.${name}}`;
    expect(generated).toContain(`await page.goto(\`${env('SITE')}/login\`);`);
    expect(generated).toContain("await page.getByLabel('Password').fill(process.env.PASSWORD);");
    expect(generated).toContain("await page.getByRole('button', { name: 'Sign in' }).click();");
    expect(generated).toContain(
      `await expect(page.getByText(\`Welcome, ${env('USER')}\`).first()).toBeVisible();`,
    );
    expect(change?.diff).toMatch(/^(=+\n)?--- \/dev\/null/m);
    expect(result?.steps.filter((s) => s.kind === 'TOOL_CALL').map((s) => s.tool)).toEqual([
      'navigate',
      'fill',
      'fill',
      'click',
      'verify_text_visible',
      'finish',
    ]);
    expect(result?.assertions.some((a) => a.passed && /verify_text_visible/.test(a.condition))).toBe(true);
    expect(outcome.browserCheckResult?.scriptShape).toBe('PLAIN');
    // The password was really typed: the site signed in (exploration once, verification once).
    expect(site.logins).toBe(2);
    // The key went to the model endpoint, from the agent.
    expect(model.requests.at(-1)?.headers.authorization).toBe('Bearer model-key-never-in-a-runner');
  }, 120_000);

  it('REPLAY: the stored script runs with no model call', async () => {
    const before = model.requests.length;
    const outcome = await run(agentic, job({ script: generated, scriptVersion: 1 }));
    expect(outcome.status, outcome.errorMessage ?? '').toBe('PASSED');
    expect(outcome.agenticCheckResult).toMatchObject({
      mode: 'REPLAY',
      scriptVersion: 1,
      scriptChange: null,
      modelUsage: { calls: 0, model: null },
    });
    expect(model.requests.length).toBe(before);
  }, 60_000);

  it('REPAIR: a relabelled button wakes the model, which repairs the script; the repair is verified', async () => {
    site.variant = 'v2';
    const before = model.requests.length;
    conversation([
      // The model reads the button's new name from the snapshot it was given.
      (request) => {
        const label = /button "([^"]+)"/.exec(shownText(request))?.[1] ?? 'none';
        return call('click', { target: { role: 'button', name: label } });
      },
      call('verify_text_visible', { text: 'Welcome, {{USER}}' }),
      FINISH,
    ]);
    const outcome = await run(agentic, job({ script: generated, scriptVersion: 1 }));
    const result = outcome.agenticCheckResult;
    expect(outcome.status, `${outcome.errorMessage} ${JSON.stringify(result?.errors)}`).toBe('PASSED');
    expect(result?.mode).toBe('REPAIR');
    expect(result?.modelUsage.calls).toBe(3);
    const first = model.requests[before] as RecordedRequest;
    expect(shownText(first)).toContain("getByRole('button', { name: 'Sign in' })");
    expect(shownText(first)).toMatch(/Timeout|waiting for/);
    expect(shownText(first)).toContain('button "Log in"');
    expect(result?.errors[0]).toMatch(/the script of version 1 failed/);
    expect(result?.summary).toMatch(/failed.*repaired script passed/);
    const change = result?.scriptChange;
    expect(change).toMatchObject({ kind: 'REPAIRED', baseVersion: 1, verified: true });
    repaired = change?.script ?? '';
    expect(repaired).toContain("await page.getByRole('button', { name: 'Log in' }).click();");
    expect(repaired).not.toContain('Sign in');
    expect(repaired).toContain("await page.getByLabel('Password').fill(process.env.PASSWORD);");
    expect(change?.diff).toContain("-await page.getByRole('button', { name: 'Sign in' }).click();");
    expect(change?.diff).toContain("+await page.getByRole('button', { name: 'Log in' }).click();");
    expect(
      outcome.browserCheckResult?.errors.filter((e) => e.kind !== 'CONSOLE' && e.kind !== 'REQUEST'),
    ).toEqual([]);
  }, 150_000);

  it('a genuine content failure (the greeting is gone) is FAILED with no model call', async () => {
    site.variant = 'content';
    const before = model.requests.length;
    const outcome = await run(agentic, job({ script: repaired, scriptVersion: 2 }));
    expect(outcome.status).toBe('FAILED');
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.agenticCheckResult).toMatchObject({
      mode: 'REPLAY',
      scriptChange: null,
      modelUsage: { calls: 0 },
    });
    expect(outcome.errorMessage).toMatch(/toBeVisible|Welcome/);
    expect(model.requests.length).toBe(before);
    site.variant = 'v2';
  }, 90_000);

  it('no model configured: a run that needs one fails saying so; a replay still runs', async () => {
    const generate = await run(noModel, job({ script: null, scriptVersion: 0 }));
    expect(generate).toMatchObject({ status: 'FAILED', hasErrors: true, errorMessage: NO_MODEL_MESSAGE });
    expect(generate.agenticCheckResult?.errors).toContain(NO_MODEL_MESSAGE);
    const replay = await run(noModel, job({ script: repaired, scriptVersion: 2 }));
    expect(replay.status, replay.errorMessage ?? '').toBe('PASSED');
    expect(replay.agenticCheckResult?.mode).toBe('REPLAY');
    // A replay that needs a repair on a model-less agent: the script's failure and the missing model.
    site.variant = 'v1';
    const broken = await run(noModel, job({ script: repaired, scriptVersion: 2 }));
    site.variant = 'v2';
    expect(broken.status).toBe('FAILED');
    expect(broken.hasErrors).toBe(true);
    expect(broken.errorMessage).toContain(NO_MODEL_MESSAGE);
  }, 120_000);

  it.each<[string, ScriptedReply[], RegExp, number?]>([
    [
      'malformed JSON arguments',
      [{ toolCalls: [{ name: 'navigate', arguments: '{"url": "{{SITE}}/lo' }] }],
      /malformed JSON arguments to the tool navigate/,
    ],
    ['an unknown tool', [call('launch_missiles', {})], /unknown tool "launch_missiles"/],
    ['a refusal', [{ refusal: 'I cannot help with signing in.' }], /the model refused: I cannot help/],
    ['the same call over and over', [call('snapshot', {})], /repeated the same snapshot call 4 times/],
    ['a slow model', [{ delayMs: 6_000, reply: FINISH }], /did not answer within 2000 ms/],
    ['HTTP 500', [{ status: 500 }], /HTTP 500/],
    ['a body that is not JSON', [{ rawBody: '{"choices": [ oops' }], /model call 1 failed/],
    [
      'an answer over 4 MiB',
      [{ rawBody: `{"pad":"${'x'.repeat(5 * 1024 * 1024)}"}` }],
      /larger than 4194304 bytes/,
    ],
    ['no choices', [{ noChoices: true }], /no choices/],
    [
      'text only, never finishing',
      [{ text: 'I think I am done.' }],
      /stopped calling tools without calling finish/,
    ],
    ['the budget spent', SIGN_IN, /budget of 3 model calls/, 3],
  ])(
    'a model answering %s: FAILED with a clear error, the agent carries on',
    async (_name, replies, error, budget) => {
      conversation(replies);
      const outcome = await run(
        agentic,
        job({ script: null, scriptVersion: 0, maxModelCalls: budget ?? 20 }, 60_000),
      );
      const result = outcome.agenticCheckResult;
      expect(outcome.status).toBe('FAILED');
      expect(outcome.hasErrors).toBe(true);
      expect(result?.mode).toBe('GENERATE');
      expect(result?.scriptChange).toBeNull();
      expect(result?.errors.join('\n')).toMatch(error);
      expect(outcome.errorMessage).toMatch(error);
    },
    90_000,
  );

  it('the agent is alive after every misbehaviour: a stored script still replays', async () => {
    const outcome = await run(agentic, job({ script: repaired, scriptVersion: 2 }));
    expect(outcome.status, outcome.errorMessage ?? '').toBe('PASSED');
  }, 60_000);

  it('the planted secret is nowhere: model requests, results, steps, scripts, logs, artifacts', () => {
    expect(results.length).toBeGreaterThan(10);
    expect(model.requests.length).toBeGreaterThan(10);
    const hex = Buffer.from(PASSWORD).toString('hex');
    const places: Array<[string, string]> = [
      ...model.requests.map((r, i): [string, string] => [
        `model request ${i}`,
        `${JSON.stringify(r.headers)}\n${r.body}`,
      ]),
      ...results.map((r, i): [string, string] => [`result ${i}`, JSON.stringify(r)]),
      ['logs', logText.join('')],
      ['artifacts', artifactText.join('\n')],
    ];
    expect(artifactText.length).toBeGreaterThan(0);
    for (const [where, text] of places) {
      expect(text.includes(PASSWORD), where).toBe(false);
      expect(text.toLowerCase().includes(hex), `${where} (hex)`).toBe(false);
      expectNoSecret(text, PASSWORD);
    }
    // A variable the prompt does not name never reaches the model.
    for (const request of model.requests) expect(request.body).not.toContain(NOT_NAMED);
    // The model is shown the secret's name and the other variables' values.
    const first = model.requests[0] as RecordedRequest;
    expect(shownText(first)).toContain('{{PASSWORD}}: a secret');
    expect(shownText(first)).toContain(`{{USER}} = "${USER}"`);
  });
});
