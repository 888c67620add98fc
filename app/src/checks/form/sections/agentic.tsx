/**
 * AGENTIC checks: the goal in words (with a character counter), what happens to a repair, the skills the
 * model may use, the runtime, run limit and the variables the prompt may name.
 */
import { useState } from 'preact/hooks';
import { AGENTIC_REPAIR_MODES } from '../../../../../src/protocol/enums.js';
import { TextAreaField, TextField } from '../../../ui/forms.js';
import { type FormApi, NumberInput, RadioLine, text } from '../controls/inputs.js';
import { VariableRows } from '../controls/variable-rows.js';
import type { References } from './general.js';
import { RuntimeSelect } from './script.js';

/** Most characters of a prompt (the service's limit, src/protocol/job.ts AGENTIC_MAX_PROMPT_CHARS). */
export const MAX_PROMPT_CHARS = 10_000;

/** Most seconds of one AGENTIC run (the service's AGENTIC_TIMEOUT_SECONDS). */
const AGENTIC_TIMEOUT_SECONDS = 600;

const REPAIR_MODE_TEXT: Record<(typeof AGENTIC_REPAIR_MODES)[number], { label: string; hint: string }> = {
  AUTO: {
    label: 'Apply repairs automatically',
    hint: 'A repair the agent verified becomes the script at once; every version is kept with its diff.',
  },
  REVIEW: {
    label: 'Review repairs first',
    hint: 'A verified repair waits on the check’s page for you to apply or reject it.',
  },
};

/** `1,234 / 10,000 characters`, or how many too many. */
export function promptCount(length: number): string {
  const count = `${length.toLocaleString('en')} / ${MAX_PROMPT_CHARS.toLocaleString('en')} characters`;
  return length > MAX_PROMPT_CHARS
    ? `${count}: ${(length - MAX_PROMPT_CHARS).toLocaleString('en')} too many`
    : count;
}

/** The names `{{NAME}}` in a prompt names: the variables a run is given. */
export function namedVariables(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].map((m) => m[1]!))];
}

/** An AGENTIC check's prompt, repair mode, skills, runtime, run limit and variables. */
export function AgenticSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const prompt = text(fx.get('prompt'));
  const named = namedVariables(prompt);
  const mode = fx.get('repairMode') === 'REVIEW' ? 'REVIEW' : 'AUTO';
  return (
    <>
      <fieldset>
        <legend>Goal</legend>
        <TextAreaField
          label="Prompt"
          hint={
            <>
              <span class="prompt-count" data-over={prompt.length > MAX_PROMPT_CHARS ? 'true' : undefined}>
                {promptCount(prompt.length)}
              </span>
              . What to open, what to do and what counts as success, in words. Write <code>{'{{NAME}}'}</code>{' '}
              to give the run a variable: only the variables the prompt names reach the agent and its model.
              {named.length > 0 ? ` Named: ${named.join(', ')}.` : ''}
            </>
          }
          error={fx.error('prompt')}
          rows={8}
          class="prompt"
          value={prompt}
          required
          aria-required="true"
          onValue={(value) => fx.set('prompt', value)}
        />
      </fieldset>
      <fieldset aria-describedby="agentic-repair-hint">
        <legend>Repairs</legend>
        <p class="field-hint" id="agentic-repair-hint">
          The first run writes a Playwright script from the prompt; later runs replay it without a model. When
          the site changes and the script breaks, the agent repairs it and verifies the repair by running it.
        </p>
        <div class="agentic-modes">
          {AGENTIC_REPAIR_MODES.map((value) => (
            <RadioLine
              key={value}
              id={`agentic-repair-${value}`}
              name="agentic-repair-mode"
              checked={mode === value}
              label={
                <>
                  <strong>{REPAIR_MODE_TEXT[value].label}</strong>
                  <span class="radio-hint"> {REPAIR_MODE_TEXT[value].hint}</span>
                </>
              }
              onChoose={() => fx.set('repairMode', value)}
            />
          ))}
        </div>
        <SkillsInput fx={fx} />
      </fieldset>
      <fieldset>
        <legend>Run</legend>
        {refs.runtimes ? (
          <RuntimeSelect fx={fx} refs={refs} />
        ) : (
          <p class="notice">Runtimes could not be loaded.</p>
        )}
        <NumberInput
          fx={fx}
          path="timeoutSeconds"
          label="Run limit (seconds)"
          hint={`1 to ${AGENTIC_TIMEOUT_SECONDS}, default ${AGENTIC_TIMEOUT_SECONDS}: room to explore, write a script and verify it.`}
          min={1}
          max={AGENTIC_TIMEOUT_SECONDS}
        />
      </fieldset>
      <VariableRows
        fx={fx}
        path="environmentVariables"
        hint="A run gets only those its prompt names as {{NAME}} (the check's win over its group's and the account's). Mark passwords secret: they are scrubbed from everything the run reports."
      />
    </>
  );
}

/** Skill names as typed (`http, files`): the list `agentRuntime.skills` holds. */
export function parseSkills(typed: string): string[] {
  return typed
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** `agentRuntime.skills` as one comma-separated line; the text keeps what is typed, the list is what is sent. */
function SkillsInput({ fx }: { fx: FormApi }) {
  const stored = fx.get('agentRuntime.skills');
  const [typed, setTyped] = useState(() => (Array.isArray(stored) ? stored.join(', ') : ''));
  return (
    <TextField
      label="Skills"
      hint="Optional: extra tool groups the model may use beyond the browser's, separated by commas. An agent ignores the ones it does not know."
      error={fx.error('agentRuntime.skills', 'agentRuntime')}
      class="mono"
      value={typed}
      spellcheck={false}
      autoComplete="off"
      onValue={(value) => {
        setTyped(value);
        fx.set('agentRuntime.skills', parseSkills(value));
      }}
    />
  );
}
