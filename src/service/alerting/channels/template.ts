import Handlebars from 'handlebars';

/** Largest rendered webhook body, bytes (UTF-8). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Most `{{#each}}` iterations one render may run, over every loop (nested ones included). */
export const MAX_EACH_ITERATIONS = 10_000;
/**
 * Most characters one render may read out of the variables (every `{{VAR}}`, `{{lookup}}` and
 * `{{#each}}` reads counted): with MAX_BODY_BYTES it bounds the escaping and concatenation work.
 */
export const MAX_READ_CHARS = 4 * MAX_BODY_BYTES;

/** A template failed to compile or to render within its bounds. */
export class TemplateError extends Error {}

/** What the current render has used; renders are synchronous, so one at a time. */
type Budget = { iterations: number; outputChars: number; readChars: number };
let budget: Budget | null = null;

function charge(field: 'outputChars' | 'readChars', chars: number, limit: number, what: string): void {
  if (budget === null) return;
  budget[field] += chars;
  if (budget[field] > limit) throw new TemplateError(`the template ${what}`);
}

/**
 * An isolated Handlebars environment: the built-in helpers (if, unless, with, lookup, each) but not
 * `log` (it would write user text to the service's console), and an `each` that counts.
 *
 * Why counting `each` is enough to bound a render: the data is small and fixed (the notification's
 * variables, TAGS the only array, and the account's variables), no partials or custom helpers are
 * registered, and prototype access stays off (the Handlebars 4.7 default). So a template's work is
 * its own length (≤ 64 KB, the channel config bound) times the iterations of its loops, which
 * nested `{{#each}}` could otherwise multiply without end; the iteration and output caps stop that,
 * and the variables' getters (see {@link renderTemplate}) bound what `{{VAR}}` repeated copies.
 */
const env = Handlebars.create();
env.unregisterHelper('log');
const builtinEach = env.helpers.each as Handlebars.HelperDelegate;
env.registerHelper('each', function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
  const fn = options.fn;
  const counted = ((ctx: unknown, opts?: Handlebars.RuntimeOptions) => {
    if (budget !== null && ++budget.iterations > MAX_EACH_ITERATIONS) {
      throw new TemplateError(`loops more than ${MAX_EACH_ITERATIONS} times`);
    }
    const out = fn(ctx, opts);
    charge('outputChars', out.length, MAX_BODY_BYTES, `renders more than ${MAX_BODY_BYTES} bytes`);
    return out;
  }) as Handlebars.TemplateDelegate;
  return builtinEach.call(this, context, { ...options, fn: counted });
});

/**
 * The variables as the template sees them: own getters that charge what each read returns to the
 * render's budget, so `{{CHECK_ERROR_MESSAGE}}` written ten thousand times is refused before it
 * costs ten thousand copies.
 */
function metered(variables: Record<string, unknown>): Record<string, unknown> {
  const data: Record<string, unknown> = Object.create(null);
  for (const [name, value] of Object.entries(variables)) {
    const size = Array.isArray(value)
      ? value.reduce((n: number, v) => n + String(v).length + 1, 0)
      : value === null || value === undefined
        ? 0
        : String(value).length;
    Object.defineProperty(data, name, {
      enumerable: true,
      get() {
        charge(
          'readChars',
          size,
          MAX_READ_CHARS,
          `reads more than ${MAX_READ_CHARS} characters of variables`,
        );
        return value;
      },
    });
  }
  return data;
}

/**
 * Compiles a webhook template (user input): `{{VAR}}` HTML-escaped as Handlebars does, `{{{VAR}}}`
 * raw, missing variables empty (`strict: false`).
 * @returns the render function.
 * @throws TemplateError with the Handlebars message when the template does not compile.
 */
export function compileTemplate(template: string): (variables: Record<string, unknown>) => string {
  let compiled: Handlebars.TemplateDelegate;
  try {
    compiled = env.compile(template, { noEscape: false, strict: false });
    // compile() is lazy: one run without data compiles now, so a syntax error is the compile
    // error (and the work is not done twice, as a separate precompile would).
    runCompiled(compiled, {});
  } catch (err) {
    if (err instanceof TemplateError) throw err;
    throw new TemplateError(`the template does not compile: ${messageOf(err)}`);
  }
  return (variables) => {
    try {
      return runCompiled(compiled, variables);
    } catch (err) {
      if (err instanceof TemplateError) throw err;
      throw new TemplateError(`the template does not render: ${messageOf(err)}`);
    }
  };
}

/** Runs a compiled template within a fresh budget. @throws TemplateError past a bound; Handlebars' errors as they are. */
function runCompiled(compiled: Handlebars.TemplateDelegate, variables: Record<string, unknown>): string {
  budget = { iterations: 0, outputChars: 0, readChars: 0 };
  try {
    const out = compiled(metered(variables), {
      allowProtoPropertiesByDefault: false,
      allowProtoMethodsByDefault: false,
    });
    if (Buffer.byteLength(out) > MAX_BODY_BYTES) {
      throw new TemplateError(`the template renders more than ${MAX_BODY_BYTES} bytes`);
    }
    return out;
  } finally {
    budget = null;
  }
}

/**
 * Renders `template` with `variables` within the bounds above.
 * @throws TemplateError when it does not compile, loops or reads too much, or renders more than MAX_BODY_BYTES.
 */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return compileTemplate(template)(variables);
}

function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
