/**
 * The tools an AGENTIC check's model is offered (OpenAI function tools): the browser tools a runner
 * runs (src/browser/runner/tools.ts) and `finish`, the agent's own, which ends the exploration.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { BROWSER_TOOL_NAMES, type BrowserToolName } from '../../browser/tool-messages.js';

const TARGET = {
  type: 'object',
  description:
    'The element, by the role and accessible name the snapshot shows (preferred: {"role":"button","name":"Sign in"}), or by label, placeholder, testId or text.',
  properties: {
    role: { type: 'string' },
    name: { type: 'string' },
    label: { type: 'string' },
    placeholder: { type: 'string' },
    testId: { type: 'string' },
    text: { type: 'string' },
    exact: { type: 'boolean' },
  },
} as const;

const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[]) =>
  ({
    type: 'function',
    function: { name, description, parameters: { type: 'object', properties, required } },
  }) as ChatCompletionTool;

/** The tools offered to the model, in the order it is told of them. */
export const MODEL_TOOLS: ChatCompletionTool[] = [
  fn('navigate', 'Open a URL. Write variables as {{NAME}}.', { url: { type: 'string' } }, ['url']),
  fn('snapshot', "The page's accessibility snapshot (roles and names).", {}, []),
  fn('click', 'Click an element.', { target: TARGET }, ['target']),
  fn(
    'fill',
    'Type a value into a text field (replacing its content). Write variables as {{NAME}}; secret values are only ever written so.',
    { target: TARGET, value: { type: 'string' } },
    ['target', 'value'],
  ),
  fn(
    'press_key',
    'Press a key (Enter, Tab, ArrowDown…), on an element when given.',
    { key: { type: 'string' }, target: TARGET },
    ['key'],
  ),
  fn(
    'select_option',
    'Choose an option of a select element.',
    { target: TARGET, value: { type: 'string' } },
    ['target', 'value'],
  ),
  fn('wait_for_text', 'Wait until a text appears on the page.', { text: { type: 'string' } }, ['text']),
  fn(
    'verify_text_visible',
    'Check (an assertion of the check) that a text is visible.',
    { text: { type: 'string' } },
    ['text'],
  ),
  fn(
    'verify_element_visible',
    'Check (an assertion of the check) that an element is visible.',
    { target: TARGET },
    ['target'],
  ),
  fn('verify_url', "Check (an assertion of the check) the page's URL.", { url: { type: 'string' } }, ['url']),
  fn(
    'finish',
    'End the exploration: whether the goal was reached, a summary, and each success condition of the goal judged.',
    {
      passed: { type: 'boolean' },
      summary: { type: 'string' },
      assertions: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            condition: { type: 'string' },
            passed: { type: 'boolean' },
            actual: { type: 'string' },
            expected: { type: 'string' },
          },
          required: ['condition', 'passed'],
        },
      },
      suggestions: { type: 'array', items: { type: 'string' } },
    },
    ['passed', 'summary'],
  ),
];

/** Whether `name` is a browser tool the runner runs. */
export function isBrowserTool(name: string): name is BrowserToolName {
  return (BROWSER_TOOL_NAMES as readonly string[]).includes(name);
}

/** The verification tools: their statements are the script's assertions. */
export const VERIFY_TOOLS: ReadonlySet<string> = new Set([
  'verify_text_visible',
  'verify_element_visible',
  'verify_url',
]);
