import { renderTemplate, TemplateError } from './template.js';

/** A render task of the template worker. */
export type TemplateTask = { template: string; variables: Record<string, unknown> };
/** Its answer: the body, or why the template was refused. */
export type TemplateAnswer = { body: string } | { error: string };

/** Entry of the template worker thread (render.ts runs it in a piscina pool). */
export default function render(task: TemplateTask): TemplateAnswer {
  try {
    return { body: renderTemplate(task.template, task.variables) };
  } catch (err) {
    return { error: err instanceof TemplateError ? err.message : 'the template does not render' };
  }
}
