import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './schema.js';
import { literals } from '../common/literals.js';
import { CertificateSchema } from './http-result.js';

/** A place in a check's script, 1-based. */
export const ScriptLocationSchema = Type.Object({ line: Type.Integer(), column: Type.Integer() });

/**
 * One error of a browser run (docs/checks.md, "Browser check results"). ASSERTION, SCRIPT and
 * TIMEOUT fail the run; PAGE (uncaught page errors), CONSOLE (`console.error` in a page) and REQUEST
 * (failed requests, main-frame 4xx/5xx) are reported and do not.
 */
export const BrowserErrorSchema = Type.Object({
  kind: literals(['ASSERTION', 'SCRIPT', 'TIMEOUT', 'PAGE', 'CONSOLE', 'REQUEST'] as const),
  message: Type.String(),
  detail: Nullable(Type.String()),
  location: Nullable(ScriptLocationSchema),
  url: Nullable(Type.String()),
});

/** A test or `test.step`: depth 0 for a test; milliseconds from the script's start. */
export const BrowserStepSchema = Type.Object({
  name: Type.String(),
  depth: Type.Integer({ minimum: 0 }),
  startMs: Type.Number(),
  durationMs: Type.Number(),
  status: literals(['PASSED', 'FAILED', 'SKIPPED'] as const),
  error: Nullable(Type.String()),
});

/** Web vitals of one page in milliseconds (CLS unitless); null where the page did not report one. */
export const WebVitalsSchema = Type.Object({
  FCP: Nullable(Type.Number()),
  LCP: Nullable(Type.Number()),
  CLS: Nullable(Type.Number()),
  TBT: Nullable(Type.Number()),
  INP: Nullable(Type.Number()),
  TTFB: Nullable(Type.Number()),
});

/**
 * The browser part of a result of a BROWSER or MULTI_STEP check (docs/checks.md, "Browser check
 * results"): the steps with their timings, the pages with their web vitals, every error, the
 * versions that ran it, and what scrubbing did (counts, never values).
 */
export const BrowserCheckResultSchema = Type.Object({
  /** `TEST` (a `@playwright/test` spec) or `PLAIN` (a script with `page` in scope). */
  scriptShape: literals(['TEST', 'PLAIN'] as const),
  runtimeId: Type.String(),
  playwrightVersion: Type.String(),
  browserVersion: Type.String(),
  steps: Type.Array(BrowserStepSchema),
  pages: Type.Array(Type.Object({ url: Type.String(), webVitals: WebVitalsSchema })),
  errors: Type.Array(BrowserErrorSchema),
  /** Errors past the kept number, dropped. */
  droppedErrors: Type.Integer({ minimum: 0 }),
  /** The run was stopped at its deadline; its artifacts are what was captured then. */
  timedOut: Type.Boolean(),
  /** Milliseconds from the job's start to the script's first statement (the warm overhead). */
  startupMs: Nullable(Type.Number()),
  scrubbing: Type.Object({
    /** Secret values replaced in artifacts (every encoding counts). */
    secretValues: Type.Integer({ minimum: 0 }),
    /** Credential header and cookie values replaced. */
    credentialHeaders: Type.Integer({ minimum: 0 }),
    /** Secrets of 3 characters or fewer, too short to scrub safely: their artifacts were withheld. */
    shortSecretsNotScrubbed: Type.Integer({ minimum: 0 }),
    /** The final scan still found a secret: no artifact was uploaded. */
    artifactsWithheld: Type.Boolean(),
  }),
  /** Artifacts or parts of them left out to stay within the upload budget, in words. */
  trimmed: Type.Array(Type.String()),
  /**
   * The certificate the check's `sslCheckDomain` serves on port 443, read by the agent while the
   * script ran (expired and untrusted ones too: `daysRemaining` and `authorized` say so). Null when
   * the domain was given but no certificate could be read (the run's logs say why); absent when the
   * check has no `sslCheckDomain`.
   */
  sslCertificate: Type.Optional(Nullable(CertificateSchema)),
});
/** The browser part of a result (see {@link BrowserCheckResultSchema}); times in milliseconds. */
export type BrowserCheckResult = Static<typeof BrowserCheckResultSchema>;
