/**
 * Rows of environment variables (with secrets) and of a Playwright project's files.
 */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { removeRow } from './rows.js';
import { addRow } from './rows.js';
import { InlineError } from './inputs.js';
import type { FormApi } from './inputs.js';
import { RemoveButton } from './rows.js';
import { RowInput } from './rows.js';
import type { Json } from '../model/paths.js';
import { RowErrors } from './rows.js';
import { useBound } from './inputs.js';
import { Rows } from './rows.js';
import { text } from './inputs.js';

/**
 * Environment variable rows `{ key, value, locked, secret }` (docs/api.md, "Environment variable"): a secret's
 * value reads `*****` once saved and is kept when sent back so; a secret cannot be made non-secret.
 */
export function VariableRows({ fx, path, hint }: { fx: FormApi; path: string; hint?: ComponentChildren }) {
  const list = (fx.get(path) as Json[] | null | undefined) ?? [];
  return (
    <Rows
      fx={fx}
      path={path}
      legend="Environment variables"
      hint={hint}
      columns={['Name', 'Value', 'Secret', '']}
      count={list.length}
      addLabel="Add variable"
      onAdd={() => addRow(fx, path, { key: '', value: '', locked: false, secret: false })}
      empty="No variables of this check (its group's and the account's still apply)."
    >
      {list.map((row, i) => {
        const n = i + 1;
        const savedSecret = row.secret === true && row.value === '*****';
        return (
          <li key={i} class="row row-4">
            <RowInput fx={fx} path={`${path}[${i}].key`} label={`Variable ${n} name`} />
            <RowInput
              fx={fx}
              path={`${path}[${i}].value`}
              label={`Variable ${n} value`}
              type={row.secret === true || row.locked === true ? 'password' : 'text'}
            />
            <SecretBox
              fx={fx}
              path={`${path}[${i}].secret`}
              label={`Variable ${n} secret`}
              locked={savedSecret}
            />
            <RemoveButton label={`Remove variable ${n}`} onClick={() => removeRow(fx, path, i)} />
            <RowErrors fx={fx} paths={[`${path}[${i}]`, `${path}[${i}].locked`]} />
          </li>
        );
      })}
    </Rows>
  );
}

/** The secret checkbox of a variable row; a saved secret cannot be unchecked. */
function SecretBox({
  fx,
  path,
  label,
  locked,
}: {
  fx: FormApi;
  path: string;
  label: string;
  locked: boolean;
}) {
  const { id, error, aria } = useBound(fx, path);
  return (
    <div class="row-cell row-check">
      <input
        id={id}
        type="checkbox"
        checked={fx.get(path) === true}
        disabled={locked}
        {...aria}
        onChange={(e) => fx.set(path, e.currentTarget.checked)}
      />
      <label for={id}>
        <span class="visually-hidden">{label}</span>
        <span aria-hidden="true">Secret</span>
      </label>
      <InlineError id={`${id}-error`} error={error} />
    </div>
  );
}

/**
 * The files of a Playwright check suite's project (`dependencies`: `{ path, content }`), each with its path
 * and its content in a monospace text area; files can also be read from disk (as text, by file name).
 */
export function FileRows({ fx, path, hint }: { fx: FormApi; path: string; hint?: ComponentChildren }) {
  const list = (fx.get(path) as Json[] | null | undefined) ?? [];
  const uploadId = useId();
  return (
    <Rows
      fx={fx}
      path={path}
      legend="Project files"
      hint={hint}
      columns={[]}
      count={list.length}
      addLabel="Add file"
      onAdd={() => addRow(fx, path, { path: '', content: '' })}
      empty="No files yet: the project needs a package.json and a playwright.config.ts at its root."
    >
      {list.map((_, i) => {
        const n = i + 1;
        return (
          <li key={i} class="file-row">
            <div class="file-row-head">
              <FileField fx={fx} path={`${path}[${i}].path`} label={`File ${n} path`} />
              <RemoveButton label={`Remove file ${n}`} onClick={() => removeRow(fx, path, i)} />
            </div>
            <FileField fx={fx} path={`${path}[${i}].content`} label={`File ${n} content`} multiline />
            <RowErrors fx={fx} paths={[`${path}[${i}]`]} />
          </li>
        );
      })}
      <li class="file-upload">
        <label for={uploadId}>Add files from disk</label>
        <input
          id={uploadId}
          type="file"
          multiple
          onChange={async (e) => {
            const input = e.currentTarget;
            const files = Array.from(input.files ?? []);
            let next = [...list];
            for (const file of files) {
              const content = await file.text();
              const filePath = file.webkitRelativePath || file.name;
              const at = next.findIndex((f) => f.path === filePath);
              if (at >= 0) next = next.map((f, j) => (j === at ? { path: filePath, content } : f));
              else next.push({ path: filePath, content });
            }
            fx.set(path, next);
            input.value = '';
          }}
        />
      </li>
    </Rows>
  );
}

/** A labelled path input or content text area of a file row. */
function FileField({
  fx,
  path,
  label,
  multiline = false,
}: {
  fx: FormApi;
  path: string;
  label: string;
  multiline?: boolean;
}) {
  const { id, error, aria } = useBound(fx, path);
  const common = {
    id,
    value: text(fx.get(path)),
    spellcheck: false,
    autoComplete: 'off',
    ...aria,
  };
  return (
    <div class={multiline ? 'file-content' : 'file-path'}>
      <label for={id}>{label}</label>
      {multiline ? (
        <textarea {...common} class="code" rows={8} onInput={(e) => fx.set(path, e.currentTarget.value)} />
      ) : (
        <input {...common} class="mono" onInput={(e) => fx.set(path, e.currentTarget.value)} />
      )}
      <InlineError id={`${id}-error`} error={error} />
    </div>
  );
}
