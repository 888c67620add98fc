/**
 * What an AGENTIC run tells its model: the system message (the tools, how to name elements, how to
 * write variables), and the user message of a GENERATE or a REPAIR run. Secret variables are named,
 * never shown; other variables the prompt names are shown by value.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { JobVariable } from '../../protocol/index.js';

const SYSTEM = [
  'You write a deterministic browser check from a goal. Explore the site with the browser tools; each successful',
  'action becomes a line of a Playwright script that will replay the goal without you.',
  'Name elements by the role and accessible name the snapshot shows ({"role":"button","name":"Sign in"}),',
  'else by label, placeholder, testId or text. Write variables as {{NAME}} (never their values).',
  "Check each success condition of the goal with a verify tool: they become the script's assertions.",
  'Do only what the goal needs. When done, call finish with passed, a summary and each condition judged.',
].join('\n');

/** The `{{NAME}}`s a prompt names. */
export function namedVariables(prompt: string): Set<string> {
  return new Set([...prompt.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].map((m) => m[1] as string));
}

/** The variables a model is told of: secret ones by name only. */
function variableLines(variables: JobVariable[], isSecret: (v: JobVariable) => boolean): string {
  if (variables.length === 0) return 'No variables.';
  return variables
    .map((v) =>
      isSecret(v)
        ? `- {{${v.key}}}: a secret (write {{${v.key}}})`
        : `- {{${v.key}}} = ${JSON.stringify(v.value)}`,
    )
    .join('\n');
}

/** The first messages of a run that writes a script from the goal. */
export function generateMessages(
  prompt: string,
  variables: JobVariable[],
  isSecret: (v: JobVariable) => boolean,
): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Goal:\n${prompt}\n\nVariables:\n${variableLines(variables, isSecret)}\n\nThe browser has a blank page.`,
    },
  ];
}

/** The first messages of a run that repairs a stored script which failed at `error`. */
export function repairMessages(input: {
  prompt: string;
  variables: JobVariable[];
  isSecret: (v: JobVariable) => boolean;
  script: string;
  error: string;
  kept: string[];
  snapshot: string;
}): ChatCompletionMessageParam[] {
  const where =
    input.kept.length > 0
      ? `The browser ran the script's lines before the failing one:\n${input.kept.join('\n')}\nContinue from there: the rest of the goal, with its verifications.`
      : 'The browser is where the script began; do the whole goal again.';
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        `Goal:\n${input.prompt}`,
        `Variables:\n${variableLines(input.variables, input.isSecret)}`,
        `The check's script no longer works:\n${input.script}`,
        `It failed with: ${input.error}`,
        where,
        `The page now:\n${input.snapshot}`,
      ].join('\n\n'),
    },
  ];
}
