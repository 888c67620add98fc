import { formatMs } from '../ui/format.js';
import type { CheckResult } from '../api/schemas.js';
import { CertificateFacts } from './http.js';
import {
  Facts,
  Heading,
  type HeadingLevel,
  LongText,
  PassMark,
  below,
  formatOffset,
  ScrollRegion,
} from './text.js';

/** The browser part of a browser, multi-step or Playwright check suite result (docs/checks.md). */
export type BrowserPart = NonNullable<CheckResult['browserCheckResult']>;
/** One error of a browser run. */
type BrowserError = BrowserPart['errors'][number];
/** A test or `test.step` of a browser run: `startMs` and `durationMs` in ms from the script's start. */
type BrowserStep = BrowserPart['steps'][number];
/** Web vitals of one page, ms (CLS unitless); null where the page did not report one. */
type WebVitals = BrowserPart['pages'][number]['webVitals'];

/** Error kinds that fail the run; the others (PAGE, CONSOLE, REQUEST) are reported only. */
const FAILING_KINDS = new Set<BrowserError['kind']>(['ASSERTION', 'SCRIPT', 'TIMEOUT']);

const ERROR_KIND_LABELS: Record<BrowserError['kind'], string> = {
  ASSERTION: 'Assertion',
  SCRIPT: 'Script error',
  TIMEOUT: 'Timeout',
  PAGE: 'Page error',
  CONSOLE: 'Console error',
  REQUEST: 'Failed request',
};

type VitalName = keyof WebVitals;

/**
 * The web vitals in the order they happen, with the thresholds of "good" and "poor" web.dev publishes
 * (ms; CLS unitless): at most `good` is good, above `poor` is poor, between needs improvement.
 */
const VITALS: readonly { name: VitalName; label: string; good: number; poor: number }[] = [
  { name: 'TTFB', label: 'Time to first byte', good: 800, poor: 1800 },
  { name: 'FCP', label: 'First contentful paint', good: 1800, poor: 3000 },
  { name: 'LCP', label: 'Largest contentful paint', good: 2500, poor: 4000 },
  { name: 'CLS', label: 'Cumulative layout shift', good: 0.1, poor: 0.25 },
  { name: 'TBT', label: 'Total blocking time', good: 200, poor: 600 },
  { name: 'INP', label: 'Interaction to next paint', good: 200, poor: 500 },
];

/** The rating of a web vital value against web.dev's thresholds; null without a value. */
function vitalRating(
  name: VitalName,
  value: number | null | undefined,
): 'good' | 'needs improvement' | 'poor' | null {
  const vital = VITALS.find((v) => v.name === name);
  if (!vital || value === null || value === undefined || !Number.isFinite(value)) return null;
  if (value <= vital.good) return 'good';
  if (value > vital.poor) return 'poor';
  return 'needs improvement';
}

const RATING_GLYPHS = { good: '✓', 'needs improvement': '!', poor: '✕' } as const;

function VitalValue({ name, value }: { name: VitalName; value: number | null | undefined }) {
  const rating = vitalRating(name, value);
  if (rating === null || value === null || value === undefined) return <span class="muted">—</span>;
  return (
    <span class={`rv-vital rv-vital-${rating.replace(' ', '-')}`}>
      {name === 'CLS' ? value.toFixed(3) : formatMs(value)}{' '}
      <span class="rv-vital-rating">
        <span aria-hidden="true">{RATING_GLYPHS[rating]} </span>
        {rating}
      </span>
    </span>
  );
}

const STEP_GLYPHS: Record<BrowserStep['status'], string> = { PASSED: '✓', FAILED: '✕', SKIPPED: '–' };

/** The steps (tests at depth 0, `test.step`s below) as a table indented by depth, with a timeline bar. */
function StepsTable({ steps }: { steps: readonly BrowserStep[] }) {
  const end = Math.max(1, ...steps.map((s) => s.startMs + s.durationMs));
  return (
    <ScrollRegion label="Steps of the run">
      <table class="rv-steps">
        <caption class="visually-hidden">Steps of the run</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Starts at
            </th>
            <th scope="col" class="num">
              Duration
            </th>
            <th scope="col" class="rv-waterfall-bar-col">
              Timeline
            </th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step, i) => (
            // Steps may share a name (a step in a loop); their order is their identity.
            <tr key={i} class={`rv-step-${step.status.toLowerCase()}`}>
              <th scope="row">
                <span class="rv-step-name" style={{ paddingLeft: `${Math.min(step.depth, 8) * 1.25}rem` }}>
                  {step.depth > 0 ? <span class="visually-hidden">{`Level ${step.depth + 1}: `}</span> : null}
                  {step.name}
                </span>
                {step.error ? <span class="rv-step-error">{step.error}</span> : null}
              </th>
              <td>
                <span
                  class={`rv-mark rv-mark-${step.status === 'FAILED' ? 'bad' : step.status === 'PASSED' ? 'ok' : 'skip'}`}
                >
                  <span aria-hidden="true">{STEP_GLYPHS[step.status]} </span>
                  {step.status.charAt(0) + step.status.slice(1).toLowerCase()}
                </span>
              </td>
              <td class="num">{formatOffset(step.startMs)}</td>
              <td class="num">{formatMs(step.durationMs)}</td>
              <td class="rv-waterfall-track" aria-hidden="true">
                <span
                  class={`rv-waterfall-bar rv-step-bar-${step.status.toLowerCase()}`}
                  style={{
                    marginLeft: `${Math.min(100, (step.startMs / end) * 100)}%`,
                    width: `${Math.max(0.4, Math.min(100, (step.durationMs / end) * 100))}%`,
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** Errors of a browser run: kind, message, where (script line, URL) and the detail (stack, call log). */
function ErrorsList({ errors }: { errors: readonly BrowserError[] }) {
  return (
    <ul class="rv-errors">
      {errors.map((e, i) => (
        // Errors may repeat; their order is their identity.
        <li key={i} class={FAILING_KINDS.has(e.kind) ? 'rv-error rv-error-failing' : 'rv-error'}>
          <p class="rv-error-head">
            <span class="rv-error-kind">
              <span aria-hidden="true">{FAILING_KINDS.has(e.kind) ? '✕ ' : '! '}</span>
              {ERROR_KIND_LABELS[e.kind] ?? e.kind}
            </span>
            {e.location ? (
              <span class="muted">
                {' '}
                at line {e.location.line}, column {e.location.column}
              </span>
            ) : null}
          </p>
          <p class="rv-error-message">{e.message}</p>
          {e.url ? <p class="rv-mono rv-break muted">{e.url}</p> : null}
          {e.detail ? (
            <details class="rv-details">
              <summary>Details</summary>
              <LongText text={e.detail} />
            </details>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/**
 * The browser part: what ran it, the steps, the errors that failed the run and those only reported
 * (page errors, console errors, failed requests), each page's web vitals, what scrubbing replaced, what
 * was trimmed from the artifacts, and the certificate of `sslCheckDomain` when the check has one.
 */
export function BrowserPartView({ part, level }: { part: BrowserPart; level: HeadingLevel }) {
  const sub = below(level);
  const steps = part.steps ?? [];
  const pages = part.pages ?? [];
  const scrubbing = part.scrubbing;
  const trimmed = part.trimmed ?? [];
  return (
    <section class="rv-part">
      <Heading level={level}>Browser run</Heading>
      {part.timedOut ? (
        <p class="notice notice-error">
          The run was stopped at its time limit; the screenshot and trace are what was captured then.
        </p>
      ) : null}
      <Facts
        facts={[
          { term: 'Script', value: part.scriptShape === 'TEST' ? 'Playwright test' : 'Plain script' },
          { term: 'Runtime', value: part.runtimeId },
          { term: 'Playwright', value: part.playwrightVersion },
          { term: 'Browser', value: part.browserVersion },
          { term: 'Start-up', value: formatMs(part.startupMs) },
        ]}
      />

      {steps.length > 0 ? (
        <>
          <Heading level={sub}>Steps</Heading>
          <StepsTable steps={steps} />
        </>
      ) : null}

      <BrowserErrors part={part} level={sub} />

      {pages.length > 0 ? <WebVitalsTable pages={pages} level={sub} /> : null}

      {scrubbing ? <ScrubbingFacts scrubbing={scrubbing} level={sub} /> : null}

      {trimmed.length > 0 ? (
        <>
          <Heading level={sub}>Left out of the artifacts</Heading>
          <ul>
            {trimmed.map((t) => (
              <li key={t}>{t}</li>
            ))}
          </ul>
        </>
      ) : null}

      {part.sslCertificate !== undefined ? (
        <>
          <Heading level={sub}>Certificate</Heading>
          {part.sslCertificate === null ? (
            <p class="muted">The certificate could not be read; the logs say why.</p>
          ) : (
            <CertificateFacts certificate={part.sslCertificate} />
          )}
        </>
      ) : null}
    </section>
  );
}

/** The errors that failed the run, then (folded when some failed) those only reported. */
function BrowserErrors({ part, level: sub }: { part: BrowserPart; level: HeadingLevel }) {
  const errors = part.errors ?? [];
  const failing = errors.filter((e) => FAILING_KINDS.has(e.kind));
  const reported = errors.filter((e) => !FAILING_KINDS.has(e.kind));
  return (
    <>
      <Heading level={sub}>Errors</Heading>
      {failing.length > 0 ? (
        <ErrorsList errors={failing} />
      ) : (
        <p>
          <PassMark ok okText="No error failed the run." />
        </p>
      )}
      {reported.length > 0 ? (
        <details class="rv-details" open={failing.length === 0}>
          <summary>
            Page errors, console errors and failed requests ({reported.length}): reported, they do not fail
            the run
          </summary>
          <ErrorsList errors={reported} />
        </details>
      ) : null}
      {part.droppedErrors > 0 ? (
        <p class="muted">
          {part.droppedErrors.toLocaleString()} more errors were dropped (past the kept number).
        </p>
      ) : null}
    </>
  );
}

/** The web vitals of each page the script visited, rated. */
function WebVitalsTable({ pages, level: sub }: { pages: BrowserPart['pages']; level: HeadingLevel }) {
  return (
    <>
      <Heading level={sub}>Web vitals</Heading>
      <ScrollRegion label="Web vitals of each page the script visited">
        <table class="rv-vitals">
          <caption class="visually-hidden">Web vitals of each page the script visited</caption>
          <thead>
            <tr>
              <th scope="col">Page</th>
              {VITALS.map((v) => (
                <th key={v.name} scope="col">
                  <abbr title={v.label}>{v.name}</abbr>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {pages.map((page, i) => (
              // Pages may be visited twice; their order is their identity.
              <tr key={i}>
                <th scope="row" class="rv-mono rv-break">
                  {page.url}
                </th>
                {VITALS.map((v) => (
                  <td key={v.name}>
                    <VitalValue name={v.name} value={page.webVitals?.[v.name]} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      <p class="muted rv-small">
        Ratings follow web.dev's thresholds: good, needs improvement, poor. CLS has no unit.
      </p>
    </>
  );
}

/** What scrubbing replaced, and whether it withheld the artifacts. */
function ScrubbingFacts({
  scrubbing,
  level: sub,
}: {
  scrubbing: NonNullable<BrowserPart['scrubbing']>;
  level: HeadingLevel;
}) {
  return (
    <>
      <Heading level={sub}>Scrubbing</Heading>
      {scrubbing.artifactsWithheld ? (
        <p class="notice notice-error">
          A secret was still found in the artifacts after scrubbing, so none was uploaded.
        </p>
      ) : null}
      {scrubbing.shortSecretsNotScrubbed > 0 ? (
        <p class="notice notice-error">
          {scrubbing.shortSecretsNotScrubbed} secret values of 3 characters or fewer are too short to scrub
          safely: the artifacts they could appear in were withheld.
        </p>
      ) : null}
      <Facts
        facts={[
          { term: 'Secret values replaced', value: scrubbing.secretValues.toLocaleString() },
          { term: 'Credential headers replaced', value: scrubbing.credentialHeaders.toLocaleString() },
        ]}
      />
    </>
  );
}
