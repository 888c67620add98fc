import { compileTemplate, TemplateError } from './template.js';

/** A render task of the template worker. */
export type TemplateTask = { template: string; variables: Record<string, unknown> };
/** Its answer: the body and whether it is JSON, or why the template was refused. */
export type TemplateAnswer = { body: string; json: boolean } | { error: string };

/** Compiled templates kept, most recently used last: a channel's template compiles once, not per notification. */
const MAX_CACHED = 32;
const cache = new Map<string, (variables: Record<string, unknown>) => string>();

function compiled(template: string): (variables: Record<string, unknown>) => string {
  let render = cache.get(template);
  if (render !== undefined) {
    cache.delete(template);
  } else {
    render = compileTemplate(template);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  }
  cache.set(template, render);
  return render;
}

/** Entry of the template worker thread (render.ts runs it in a piscina pool). */
export default function render(task: TemplateTask): TemplateAnswer {
  try {
    const body = compiled(task.template)(task.variables);
    return { body, json: isJson(body) };
  } catch (err) {
    return { error: err instanceof TemplateError ? err.message : 'the template does not render' };
  }
}

/** True when a rendered body parses as JSON (sent as application/json then); parsed here, off the event loop. */
function isJson(body: string): boolean {
  const first = body.trimStart()[0];
  if (first !== '{' && first !== '[') return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}
