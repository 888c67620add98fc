import { randomInt, randomUUID } from 'node:crypto';

/** `{{NAME}}` or `{{ NAME }}`; NAME a variable key or a `$` built-in. */
const PLACEHOLDER = /\{\{\s*(\$?[A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * Built-in placeholders, as the field offers them: `{{$UUID}}` (a random v4 UUID),
 * `{{$RANDOM_NUMBER}}` (an integer 0–999 999 999), `{{$UNIX_TIMESTAMP}}` (seconds),
 * `{{$ISO_TIMESTAMP}}`. Each occurrence gets its own value.
 */
export const BUILT_IN_PLACEHOLDERS: Readonly<Record<string, () => string>> = {
  $UUID: () => randomUUID(),
  $RANDOM_NUMBER: () => String(randomInt(0, 1_000_000_000)),
  $UNIX_TIMESTAMP: () => String(Math.floor(Date.now() / 1000)),
  $ISO_TIMESTAMP: () => new Date().toISOString(),
};

/**
 * Replaces `{{KEY}}` placeholders in `text` with `variables[KEY]` (docs/checks.md,
 * "API": `{{VAR}}` interpolation). A placeholder naming no variable and no built-in is left as
 * it is and its name is passed to `onMissing` (once per occurrence). Values are inserted
 * verbatim, never interpolated again.
 */
export function interpolate(
  text: string,
  variables: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
  onMissing?: (name: string) => void,
): string {
  if (!text.includes('{{')) return text;
  const lookup =
    variables instanceof Map
      ? (name: string) => variables.get(name)
      : (name: string) =>
          Object.hasOwn(variables, name) ? (variables as Record<string, string>)[name] : undefined;
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = lookup(name);
    if (value !== undefined) return value;
    const builtIn = BUILT_IN_PLACEHOLDERS[name];
    if (builtIn) return builtIn();
    onMissing?.(name);
    return whole;
  });
}
