/**
 * The wire of a browser tool session (runner/tools.ts): the tools an AGENTIC check's model explores a
 * site with, run by a browser runner process (the same isolation as a browser check: a run user, the
 * permission model, the warm browser of the job's account), never in the agent.
 *
 * Agent → runner, on stdin, one JSON object a line: first a {@link ToolSessionInit} (after the pool's
 * optional `prepare` line), then one {@link ToolCall} at a time; end of file ends the session.
 * Runner → agent, on fd 3: one `{ t: 'tool', … }` {@link ToolAnswer} per call (messages.ts).
 */

/**
 * How a tool names an element, in Playwright's user-facing locators (the first present wins, in this
 * order): `role` (ARIA role, with its accessible `name`), `label`, `placeholder`, `testId`, `text`.
 * `exact` asks for an exact (case-sensitive, whole-string) name or text match.
 */
export type ToolTarget = {
  role?: string;
  name?: string;
  label?: string;
  placeholder?: string;
  testId?: string;
  text?: string;
  exact?: boolean;
};

/** The browser tools a session runs, by name; `finish` is the agent's own (it ends the loop). */
export const BROWSER_TOOL_NAMES = [
  'navigate',
  'snapshot',
  'click',
  'fill',
  'press_key',
  'select_option',
  'wait_for_text',
  'verify_text_visible',
  'verify_element_visible',
  'verify_url',
] as const;
/** A browser tool's name (see {@link BROWSER_TOOL_NAMES}). */
export type BrowserToolName = (typeof BROWSER_TOOL_NAMES)[number];

/**
 * The first line of a tool session.
 * - `env`: the variables the prompt names (name → value): `{{NAME}}` in a tool's text argument is
 *   replaced by its value in the runner, and the statement reads `process.env.NAME`.
 * - `secrets`: values scrubbed from every answer before it leaves the runner (the agent scrubs again).
 * - `actionTimeoutMs`: how long one action or verification waits for its element, ms.
 * - `maxOutputChars`: longest answer text (a snapshot is cut to it), characters.
 */
export type ToolSessionInit = {
  t: 'tools';
  wsEndpoint: string;
  env: Record<string, string>;
  secrets: string[];
  actionTimeoutMs: number;
  maxOutputChars: number;
};

/**
 * One tool call: `tool` a browser tool, or `run_code` (the agent only, never the model: statements of
 * a stored script, run with `page` and `expect` in scope to bring the page to where the script failed).
 */
export type ToolCall = {
  t: 'call';
  id: number;
  tool: BrowserToolName | 'run_code';
  args: Record<string, unknown>;
};

/**
 * The runner's answer to call `id`: `ok` false when the action failed or a verification did not hold
 * (`output` says why); `output` the scrubbed text for the model (a snapshot after an action);
 * `code` the Playwright statement that repeats a successful action or verification (null for a
 * snapshot, a failure); `url` the page's URL after the call.
 */
export type ToolAnswer = {
  t: 'tool';
  id: number;
  ok: boolean;
  output: string;
  code: string | null;
  url: string;
};
