/**
 * Browser, multi-step and Playwright checks: script or project, runtime, run limit and variables.
 */
import { useState } from 'preact/hooks';
import {
  type FormApi,
  NumberInput,
  RadioLine,
  SelectInput,
  TextArea,
  TextInput,
} from '../controls/inputs.js';
import { timeoutLimitOf } from '../model/types.js';
import type { References } from './general.js';
import { FileRows } from '../controls/variable-rows.js';
import { VariableRows } from '../controls/variable-rows.js';

/** `runtimeId`: the runtime of the check's scripts, or its group's (else the newest). */
export function RuntimeSelect({ fx, refs }: { fx: FormApi; refs: References }) {
  const runtimes = refs.runtimes ?? [];
  const multiStep = fx.type === 'MULTI_STEP';
  return (
    <SelectInput
      fx={fx}
      path="runtimeId"
      label="Runtime"
      hint={
        multiStep
          ? 'The package set the script runs with. Multi-step checks need one with multi-step support.'
          : 'The package set the scripts run with.'
      }
      options={[
        { value: '', label: "Default (the group's, else the newest)" },
        ...runtimes.map((r) => ({
          value: r.name,
          label: `${r.name} (${r.stage.toLowerCase()}${multiStep && !r.multiStepSupport ? ', no multi-step support' : ''})`,
        })),
      ]}
      parse={(value) => (value === '' ? null : value)}
    />
  );
}

/** A browser or multi-step check's script, runtime, run limit, certificate domain and variables. */
export function ScriptSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const limit = timeoutLimitOf(fx.type);
  return (
    <>
      <fieldset>
        <legend>Script</legend>
        <TextArea
          fx={fx}
          path="script"
          label="Script"
          hint={
            fx.type === 'MULTI_STEP'
              ? 'A @playwright/test spec using the request fixture and test.step. At most 131 072 characters.'
              : 'A @playwright/test spec, or the body of an async function with page, context, request, browser and expect in scope. At most 131 072 characters.'
          }
          rows={18}
          required
        />
        <ScriptRunSettings fx={fx} refs={refs} limit={limit} />
      </fieldset>
      <VariableRows
        fx={fx}
        path="environmentVariables"
        hint="In process.env of the script; the check's win over its group's and the account's."
      />
    </>
  );
}

/** Runtime, `timeoutSeconds` and `sslCheckDomain`, shared by the script types. */
function ScriptRunSettings({ fx, refs, limit }: { fx: FormApi; refs: References; limit: number }) {
  return (
    <>
      {refs.runtimes ? (
        <RuntimeSelect fx={fx} refs={refs} />
      ) : (
        <p class="notice">Runtimes could not be loaded.</p>
      )}
      <div class="field-pair">
        <NumberInput
          fx={fx}
          path="timeoutSeconds"
          label="Run limit (seconds)"
          hint={`1 to ${limit}, default ${limit}.`}
          min={1}
          max={limit}
        />
        <TextInput
          fx={fx}
          path="sslCheckDomain"
          label="Certificate domain"
          hint="Optional: a domain (e.g. www.example.com) whose TLS certificate is read on each run."
          nullable
          mono
        />
      </div>
    </>
  );
}

/**
 * A Playwright check suite: the project's files, the test entry (an inline spec or a path among the files),
 * runtime, run limit, certificate domain and variables.
 */
export function PlaywrightSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const script = fx.get('script');
  const inline = typeof script === 'string' && script !== '';
  const [mode, setMode] = useState<'path' | 'inline'>(inline ? 'inline' : 'path');
  const files = (fx.get('dependencies') as { path: string }[] | null | undefined) ?? [];
  const paths = files.map((f) => f.path).filter((p) => p !== '');
  const choose = (next: 'path' | 'inline') => {
    setMode(next);
    if (next === 'inline') {
      fx.set('scriptPath', null);
      if (!inline) fx.set('script', '');
    } else {
      fx.set('script', null);
      const spec = paths.find((p) => /\.(spec|test)\.[cm]?[jt]s$/.test(p)) ?? paths[0] ?? null;
      if (fx.get('scriptPath') == null) fx.set('scriptPath', spec);
    }
  };
  return (
    <>
      <fieldset>
        <legend>Project</legend>
        <FileRows
          fx={fx}
          path="dependencies"
          hint="At the root: a package.json (a JSON object), a playwright.config.ts (or .js, .mjs, .cjs), at most one lock file. At most 100 files, 128 KiB each, 5 MiB in all; paths relative, no .. segments. Only Chromium projects run, with the runtime's packages (nothing is installed on the agent)."
        />
        <fieldset class="nested" aria-describedby="playwright-entry-hint">
          <legend>Test entry</legend>
          <p class="field-hint" id="playwright-entry-hint">
            The spec to run: one of the project's files, or an inline spec.
          </p>
          <div class="check-row">
            <RadioLine
              id="playwright-entry-path"
              name="playwright-entry"
              label="A file of the project"
              checked={mode === 'path'}
              onChoose={() => choose('path')}
            />
            <RadioLine
              id="playwright-entry-inline"
              name="playwright-entry"
              label="An inline spec"
              checked={mode === 'inline'}
              onChoose={() => choose('inline')}
            />
          </div>
          {mode === 'path' ? (
            <SelectInput
              fx={fx}
              path="scriptPath"
              label="Spec file"
              aliases={['script']}
              options={paths.map((p) => ({ value: p, label: p }))}
              parse={(value) => (value === '' ? null : value)}
            />
          ) : (
            <TextArea fx={fx} path="script" label="Inline spec" rows={14} required aliases={['scriptPath']} />
          )}
        </fieldset>
        <ScriptRunSettings fx={fx} refs={refs} limit={timeoutLimitOf(fx.type)} />
      </fieldset>
      <VariableRows
        fx={fx}
        path="environmentVariables"
        hint="In process.env of the tests; the check's win over its group's and the account's."
      />
    </>
  );
}
