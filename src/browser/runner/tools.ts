/**
 * The runner's side of a browser tool session (../tool-messages.ts): an AGENTIC check's model explores
 * a site through these tools, each run here, in the runner process (a run user, the permission model),
 * on a fresh context of the account's warm browser. Every action answers with the Playwright statement
 * that repeats it and a snapshot of the page after it; every answer is scrubbed of the session's
 * secrets before it is sent. Variables are written `{{NAME}}` by the model: their values are put in
 * here, and the statement reads `process.env.NAME`.
 */
import { Scrubber } from '../../common/scrub.js';
import type { BrowserToolName, ToolAnswer, ToolCall, ToolSessionInit, ToolTarget } from '../tool-messages.js';
import { type Loaded, type Prepared, prepare } from './context.js';
import { errorMessage } from './errors.js';
import { type Any, channel } from './state.js';

/** Longest text argument of a tool (a URL, a value to type, a text to find), characters. */
const MAX_ARG_CHARS = 4_096;
/** Time a navigation may take, ms. */
const NAVIGATION_TIMEOUT_MS = 20_000;

/** A single-quoted JavaScript string literal of `text`. */
export function quote(text: string): string {
  return `'${text
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "\\'")
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')}'`;
}

const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/**
 * A text argument as the page gets it (`{{NAME}}` replaced by the variable's value; an unknown name
 * stays as written) and as the script writes it: a string literal, `process.env.NAME` for a lone
 * placeholder, or a template literal mixing both.
 */
export function textArgument(text: string, env: Record<string, string>): { value: string; code: string } {
  const parts: string[] = [];
  let value = '';
  let last = 0;
  let dynamic = false;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const name = match[1] as string;
    const at = match.index ?? 0;
    const literal = text.slice(last, at);
    value += literal;
    parts.push(literal.replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${'));
    if (Object.hasOwn(env, name)) {
      value += env[name];
      parts.push(`\${process.env.${name}}`);
      dynamic = true;
    } else {
      value += match[0];
      parts.push(match[0]);
    }
    last = at + match[0].length;
  }
  const rest = text.slice(last);
  value += rest;
  if (!dynamic) return { value, code: quote(text) };
  parts.push(rest.replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${'));
  const single = /^\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}$/.exec(text);
  return { value, code: single ? `process.env.${single[1]}` : `\`${parts.join('')}\`` };
}

/** Reads a text argument: a string of at most 4 096 characters. @throws Error naming it otherwise. */
function textArg(args: Record<string, unknown>, key: string): string {
  const value = args[key];
  if (typeof value !== 'string' || value.length > MAX_ARG_CHARS)
    throw new Error(`argument ${key} must be a string of at most ${MAX_ARG_CHARS} characters`);
  return value;
}

/** The locator of `target` on `page`, and the same locator as script text. @throws Error when it names nothing. */
export function locatorOf(page: Any, target: unknown): { locator: Any; code: string } {
  if (target === null || typeof target !== 'object') throw new Error('argument target must be an object');
  const t = target as ToolTarget;
  const exact = t.exact === true;
  const opt = exact ? ', { exact: true }' : '';
  const str = (v: unknown, key: string): string | null => {
    if (v === undefined || v === null || v === '') return null;
    if (typeof v !== 'string' || v.length > MAX_ARG_CHARS) throw new Error(`target.${key} must be a string`);
    return v;
  };
  const role = str(t.role, 'role');
  const name = str(t.name, 'name');
  if (role !== null) {
    if (!/^[a-z]+$/.test(role)) throw new Error('target.role must be an ARIA role such as button or link');
    const options = name === null ? {} : { name, ...(exact ? { exact } : {}) };
    const code =
      name === null
        ? `page.getByRole(${quote(role)})`
        : `page.getByRole(${quote(role)}, { name: ${quote(name)}${exact ? ', exact: true' : ''} })`;
    return { locator: page.getByRole(role, options), code };
  }
  const by: Array<[keyof ToolTarget, string]> = [
    ['label', 'getByLabel'],
    ['placeholder', 'getByPlaceholder'],
    ['testId', 'getByTestId'],
    ['text', 'getByText'],
  ];
  for (const [key, method] of by) {
    const value = str(t[key], key);
    if (value === null) continue;
    const withOpt = key === 'testId' ? '' : opt;
    return {
      locator: key === 'testId' ? page[method](value) : page[method](value, { exact }),
      code: `page.${method}(${quote(value)}${withOpt})`,
    };
  }
  throw new Error('target must give role (with name), label, placeholder, testId or text');
}

/** One session: its page, variables, scrubber and limits. */
type Session = {
  init: ToolSessionInit;
  loaded: Loaded;
  page: Any;
  scrubber: Scrubber;
};

/** The accessibility snapshot of the page (YAML), or why there is none. */
async function snapshotOf(session: Session): Promise<string> {
  try {
    const yaml: string = await session.page
      .locator('body')
      .ariaSnapshot({ timeout: session.init.actionTimeoutMs });
    return `Page: ${session.page.url()}\nTitle: ${await session.page.title()}\n${yaml}`;
  } catch (err) {
    return `Page: ${session.page.url()}\n(no snapshot: ${errorMessage(err)})`;
  }
}

/** Runs one tool: its output text and the statement that repeats it (null: none). @throws Error when it fails. */
async function runTool(
  session: Session,
  tool: BrowserToolName | 'run_code',
  args: Record<string, unknown>,
): Promise<{ output: string; code: string | null; ok?: boolean }> {
  const { page, init, loaded } = session;
  const timeout = init.actionTimeoutMs;
  const expect = loaded.playwrightTest.expect;
  const after = async (code: string) => ({ output: `Done.\n${await snapshotOf(session)}`, code });
  switch (tool) {
    case 'navigate': {
      const url = textArgument(textArg(args, 'url'), init.env);
      await page.goto(url.value, { timeout: NAVIGATION_TIMEOUT_MS });
      return after(`await page.goto(${url.code});`);
    }
    case 'snapshot':
      return { output: await snapshotOf(session), code: null };
    case 'click': {
      const { locator, code } = locatorOf(page, args.target);
      await locator.click({ timeout });
      return after(`await ${code}.click();`);
    }
    case 'fill': {
      const { locator, code } = locatorOf(page, args.target);
      const value = textArgument(textArg(args, 'value'), init.env);
      await locator.fill(value.value, { timeout });
      return after(`await ${code}.fill(${value.code});`);
    }
    case 'press_key': {
      const key = textArg(args, 'key');
      if (!/^[A-Za-z0-9+]{1,32}$/.test(key)) throw new Error('argument key must be a key name such as Enter');
      if (args.target !== undefined && args.target !== null) {
        const { locator, code } = locatorOf(page, args.target);
        await locator.press(key, { timeout });
        return after(`await ${code}.press(${quote(key)});`);
      }
      await page.keyboard.press(key);
      return after(`await page.keyboard.press(${quote(key)});`);
    }
    case 'select_option': {
      const { locator, code } = locatorOf(page, args.target);
      const value = textArgument(textArg(args, 'value'), init.env);
      await locator.selectOption(value.value, { timeout });
      return after(`await ${code}.selectOption(${value.code});`);
    }
    case 'wait_for_text': {
      const text = textArgument(textArg(args, 'text'), init.env);
      await page.getByText(text.value).first().waitFor({ timeout });
      return after(`await page.getByText(${text.code}).first().waitFor();`);
    }
    case 'verify_text_visible': {
      const text = textArgument(textArg(args, 'text'), init.env);
      const code = `await expect(page.getByText(${text.code}).first()).toBeVisible();`;
      return verification(expect(page.getByText(text.value).first()).toBeVisible({ timeout }), code);
    }
    case 'verify_element_visible': {
      const { locator, code } = locatorOf(page, args.target);
      return verification(expect(locator).toBeVisible({ timeout }), `await expect(${code}).toBeVisible();`);
    }
    case 'verify_url': {
      const url = textArgument(textArg(args, 'url'), init.env);
      return verification(
        expect(page).toHaveURL(url.value, { timeout }),
        `await expect(page).toHaveURL(${url.code});`,
      );
    }
    case 'run_code': {
      const code = textArg2(args.code);
      const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
      const env = { ...init.env };
      await new AsyncFunction('page', 'expect', 'process', code)(page, expect, { env });
      return { output: await snapshotOf(session), code: null };
    }
    default:
      throw new Error(`unknown tool ${String(tool)}`);
  }
}

/** The `code` argument of run_code: a string of at most 128 KiB. */
function textArg2(value: unknown): string {
  if (typeof value !== 'string' || value.length > 131_072) throw new Error('argument code must be a string');
  return value;
}

/** A verification: passed, its statement kept; not passed, the reason for the model and the statement still given. */
async function verification(
  check: Promise<unknown>,
  code: string,
): Promise<{ output: string; code: string; ok: boolean }> {
  try {
    await check;
    return { output: 'Verified: the condition holds.', code, ok: true };
  } catch (err) {
    return { output: `Not verified: ${errorMessage(err)}`, code, ok: false };
  }
}

/**
 * Runs a tool session: connects (or takes the browser prepared while the runner waited), opens a
 * fresh page, then answers each call of `calls` in order. Resolves when `calls` ends (the agent closed
 * stdin) with the context and connection closed. Never rejects: a tool that throws is an answer with
 * `ok: false`.
 */
export async function runToolSession(
  init: ToolSessionInit,
  loaded: Loaded,
  prepared: Promise<Prepared | null> | null,
  calls: AsyncIterable<ToolCall>,
): Promise<void> {
  const scrubber = new Scrubber(init.secrets);
  const early = prepared === null ? null : await prepared;
  const ready =
    early !== null && early.wsEndpoint === init.wsEndpoint ? early : await prepare(init.wsEndpoint, loaded);
  if (ready === null) {
    channel.send({ t: 'error', message: 'could not connect to the browser' });
    return;
  }
  const context = ready.context;
  // An exploration leaves no trace: the prepared context's tracing would only hold the browser's memory.
  await context.tracing.stop().catch(() => {});
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(init.actionTimeoutMs);
  const session: Session = { init, loaded, page, scrubber };
  const cap = (text: string) =>
    text.length > init.maxOutputChars ? `${text.slice(0, init.maxOutputChars)}\n… (cut)` : text;
  for await (const call of calls) {
    let answer: ToolAnswer;
    try {
      const done = await runTool(session, call.tool, call.args ?? {});
      answer = {
        t: 'tool',
        id: call.id,
        ok: done.ok ?? true,
        output: cap(scrubber.text(done.output)),
        code: done.code === null ? null : scrubber.text(done.code),
        url: scrubber.text(safeUrl(page)),
      };
    } catch (err) {
      answer = {
        t: 'tool',
        id: call.id,
        ok: false,
        output: cap(scrubber.text(`Error: ${errorMessage(err)}`)),
        code: null,
        url: scrubber.text(safeUrl(page)),
      };
    }
    channel.send(answer);
  }
  await context.close().catch(() => {});
  await ready.browser.close().catch(() => {});
}

function safeUrl(page: Any): string {
  try {
    return String(page.url()).slice(0, 2_048);
  } catch {
    return '';
  }
}
