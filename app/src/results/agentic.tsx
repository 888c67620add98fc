/**
 * The AGENTIC part of a result (docs/checks.md, "Agentic"): what the run did and concluded, the conditions it
 * judged, its conversation with the model (tool calls folded), suggestions, errors, model usage and the
 * script it wrote or repaired. The browser result of the script it ran last follows it on the page.
 */
import type { CheckResult } from '../api/schemas.js';
import { formatDateTime, formatMs } from '../ui/format.js';
import './diff.css';
import { Facts, Heading, type HeadingLevel, PassMark, ScrollRegion, below } from './text.js';

/** The AGENTIC part of a result. */
export type AgenticPart = NonNullable<CheckResult['agenticCheckResult']>;
type Step = AgenticPart['steps'][number];

/** What a run did, in words. */
const MODE_TEXT: Record<AgenticPart['mode'], string> = {
  GENERATE: 'Wrote a script from the prompt (the check had none)',
  REPLAY: 'Replayed the stored script (no model call)',
  REPAIR: 'Repaired the stored script after it failed',
};

/** One line of a unified diff and how it shows: added, removed, a hunk header, or context. */
function lineKind(line: string): 'add' | 'del' | 'hunk' | 'meta' | 'ctx' {
  if (line.startsWith('+++') || line.startsWith('---')) return 'meta';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'ctx';
}

const LINE_LABEL = { add: 'added: ', del: 'removed: ', hunk: '', meta: '', ctx: '' } as const;

/**
 * A unified diff, its added and removed lines marked by colour and by a hidden word for screen readers
 * (the `+` and `-` stay visible), in a scrollable region.
 */
export function DiffView({ diff, label }: { diff: string; label: string }) {
  if (diff.trim() === '') return <p class="muted">No diff.</p>;
  const lines = diff.replace(/\n$/, '').split('\n');
  return (
    <ScrollRegion label={label}>
      <pre class="diff">
        <code>
          {lines.map((line, i) => {
            const kind = lineKind(line);
            return (
              <span key={i} class={`diff-line diff-${kind}`}>
                {LINE_LABEL[kind] ? <span class="visually-hidden">{LINE_LABEL[kind]}</span> : null}
                {line}
                {'\n'}
              </span>
            );
          })}
        </code>
      </pre>
    </ScrollRegion>
  );
}

/** A tool call, folded: its name and time as the summary, its input and output inside. */
function ToolCall({ step }: { step: Step }) {
  return (
    <details class="rv-details agentic-tool">
      <summary>
        <span class="rv-mono">{step.tool ?? 'tool'}</span>
        <span class="muted"> · {formatMs(step.durationMs)}</span>
      </summary>
      <dl class="agentic-tool-io">
        <dt>Input</dt>
        <dd>
          <pre class="agentic-io">{step.input ?? '—'}</pre>
        </dd>
        <dt>Output</dt>
        <dd>
          <pre class="agentic-io">{step.output ?? '—'}</pre>
        </dd>
      </dl>
    </details>
  );
}

/** The run's steps in order: the model's messages as text, tool calls folded. */
function Steps({ steps }: { steps: readonly Step[] }) {
  if (steps.length === 0) return <p class="muted">No model steps: the stored script ran on its own.</p>;
  return (
    <ol class="agentic-steps">
      {steps.map((step, i) => (
        <li key={i} class={step.kind === 'MESSAGE' ? 'agentic-step agentic-message' : 'agentic-step'}>
          <span class="visually-hidden">{step.kind === 'MESSAGE' ? 'Model message' : 'Tool call'}, </span>
          <time class="muted agentic-step-time" dateTime={step.startedAt}>
            {formatDateTime(step.startedAt)}
          </time>
          {step.kind === 'MESSAGE' ? <p class="agentic-text">{step.text ?? ''}</p> : <ToolCall step={step} />}
        </li>
      ))}
    </ol>
  );
}

/** The conditions the run judged: each with passed or failed, what was seen and what was expected. */
function Conditions({ assertions }: { assertions: AgenticPart['assertions'] }) {
  if (assertions.length === 0) return <p class="muted">The run judged no condition.</p>;
  return (
    <ScrollRegion label="Conditions the run judged">
      <table>
        <caption class="visually-hidden">Conditions the run judged</caption>
        <thead>
          <tr>
            <th scope="col">Condition</th>
            <th scope="col">Result</th>
            <th scope="col">Seen</th>
            <th scope="col">Expected</th>
          </tr>
        </thead>
        <tbody>
          {assertions.map((a, i) => (
            <tr key={i}>
              <th scope="row" class="agentic-condition">
                {a.condition}
              </th>
              <td>
                <PassMark ok={a.passed} />
              </td>
              <td class="rv-break">{a.actual ?? '—'}</td>
              <td class="rv-break">{a.expected ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** Tokens as a number, or "not reported". */
function tokens(value: number | null): string {
  return value === null ? 'not reported' : value.toLocaleString('en');
}

/** The AGENTIC part of a result. */
export function AgenticPartView({ part, level }: { part: AgenticPart; level: HeadingLevel }) {
  const sub = below(level);
  const usage = part.modelUsage;
  const change = part.scriptChange;
  return (
    <section class="rv-part agentic-part">
      <Heading level={level}>Agentic run</Heading>
      <p class="agentic-summary">{part.summary || <span class="muted">No summary.</span>}</p>
      <Facts
        facts={[
          { term: 'What it did', value: MODE_TEXT[part.mode] ?? part.mode },
          { term: 'Script version run', value: part.scriptVersion === 0 ? 'none' : `v${part.scriptVersion}` },
        ]}
      />
      <Heading level={sub}>Conditions</Heading>
      <Conditions assertions={part.assertions} />
      <Heading level={sub}>Steps</Heading>
      <Steps steps={part.steps} />
      {part.errors.length > 0 ? (
        <>
          <Heading level={sub}>Errors</Heading>
          <ul class="agentic-errors">
            {part.errors.map((e, i) => (
              <li key={i}>
                <span aria-hidden="true">✕ </span>
                {e}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {part.suggestions.length > 0 ? (
        <>
          <Heading level={sub}>Suggestions</Heading>
          <ul>
            {part.suggestions.map((s, i) => (
              <li key={i}>{s}</li>
            ))}
          </ul>
        </>
      ) : null}
      {change ? (
        <>
          <Heading level={sub}>{change.kind === 'GENERATED' ? 'Script written' : 'Script repaired'}</Heading>
          <Facts
            facts={[
              { term: 'Made over', value: change.baseVersion === 0 ? 'no script' : `v${change.baseVersion}` },
              {
                term: 'Verified',
                value: (
                  <PassMark
                    ok={change.verified}
                    okText="Yes: it passed when run"
                    badText="No: kept in this result only"
                  />
                ),
              },
              { term: 'Reason', value: change.reason },
            ]}
          />
          <details class="rv-details agentic-diff">
            <summary>Diff</summary>
            <DiffView diff={change.diff} label="The script change as a diff" />
          </details>
        </>
      ) : null}
      <Heading level={sub}>Model usage</Heading>
      <Facts
        facts={[
          { term: 'Model', value: usage.model ?? 'none called' },
          { term: 'Calls', value: String(usage.calls) },
          { term: 'Time in model calls', value: formatMs(usage.durationMs) },
          { term: 'Prompt tokens', value: tokens(usage.promptTokens) },
          { term: 'Completion tokens', value: tokens(usage.completionTokens) },
        ]}
      />
    </section>
  );
}
