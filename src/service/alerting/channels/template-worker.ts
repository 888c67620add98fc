import { renderTemplate, TemplateError } from './template.js';

/** A render task of the template worker. */
export type TemplateTask = { template: string; variables: Record<string, unknown> };
/** Its answer: the body, or why the template was refused. */
export type TemplateAnswer = { body: string; json: boolean } | { error: string };

/** Entry of the template worker thread (render.ts runs it in a piscina pool). */
export default function render(task: TemplateTask): TemplateAnswer {
  try {
    const body = renderTemplate(task.template, task.variables);
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
