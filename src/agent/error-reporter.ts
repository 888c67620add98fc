import type { AgentEvent } from '../protocol/index.js';
import { Scrubber } from '../common/scrub.js';
import { REDACTED } from '../common/redaction.js';
import type { Logger } from '../common/logger.js';
import { VERSION } from '../common/paths.js';
import { linkSignal } from '../common/linked-signal.js';
import type { ServiceClient } from './service-client.js';

/** Reports accepted per rolling minute; more are dropped (and counted in the debug log). */
export const DEFAULT_REPORTS_PER_MINUTE = 10;
/** Time one report may take before it is abandoned, milliseconds. */
const REPORT_TIMEOUT_MS = 10_000;
const MAX_MESSAGE_LENGTH = 4096;
const MAX_STACK_LENGTH = 16_384;

/** Options of {@link ErrorReporter}. */
export type ErrorReporterOptions = {
  client: Pick<ServiceClient, 'postEvent'>;
  /** False when `EXTERNAL_OBSERVABILITY=off`: `report` does nothing. */
  enabled: boolean;
  /** Scrubbed from every report, with its URL- and base64-encoded forms. */
  apiKey: string;
  logger: Logger;
  /** Reports per rolling minute; default 10. */
  maxPerMinute?: number;
};

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Sends error reports to `POST /v1/agent/events` (docs/api.md, "Events" 7): message, stack,
 * agent version, platform and runtime version, nothing else. Before sending, the
 * API key (and anything shaped like a key or bearer token), URLs and e-mail
 * addresses are replaced by `*****`. Reports are rate-limited; a failed report is
 * swallowed and logged at debug.
 */
export class ErrorReporter {
  readonly #options: ErrorReporterOptions;
  readonly #scrubbers: RegExp[];
  readonly #keyScrubber: Scrubber;
  readonly #sentAtMs: number[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #closed = new AbortController();

  constructor(options: ErrorReporterOptions) {
    this.#options = options;
    const key = options.apiKey;
    const forms = [key, encodeURIComponent(key), Buffer.from(key).toString('base64')].filter(
      (f) => f.length >= 4,
    );
    // The key in any encoding and case (Scrubber), then the literal forms as before.
    this.#keyScrubber = new Scrubber([key]);
    this.#scrubbers = [
      ...new Set(forms.map((f) => new RegExp(escapeRegExp(f), 'g'))),
      /\bpl_[0-9a-f]{32}\b/gi,
      /\b(bearer|basic)\s+[\w\-.~+/=]+/gi,
      // URLs, but not the file: and node: frames of a stack trace.
      /\b(?!(?:file|node):)[a-z][a-z0-9+.-]*:\/\/[^\s'"<>)]+/gi,
      /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b/gi,
    ];
  }

  /** Replaces secrets, URLs and e-mail addresses in `text` by `*****`. */
  scrub(text: string): string {
    return this.#scrubbers.reduce(
      (out, pattern) => out.replace(pattern, REDACTED),
      this.#keyScrubber.text(text),
    );
  }

  /** The event that would be sent for `err`, scrubbed and truncated to the protocol's limits. */
  toEvent(err: unknown): AgentEvent {
    const error = err instanceof Error ? err : new Error(typeof err === 'string' ? err : 'non-error thrown');
    const event: AgentEvent = {
      message: this.#keyScrubber.maskTail(
        this.scrub(`${error.name}: ${error.message}`).slice(0, MAX_MESSAGE_LENGTH),
      ),
      agentVersion: VERSION,
      platform: `${process.platform}-${process.arch}`,
      runtimeVersion: process.version,
    };
    if (typeof error.stack === 'string') {
      event.stack = this.#keyScrubber.maskTail(this.scrub(error.stack).slice(0, MAX_STACK_LENGTH));
    }
    return event;
  }

  /**
   * Reports `err` in the background unless disabled, closed or over the rate limit.
   * Never throws; the promise (which never rejects) settles when the report was sent or given up.
   */
  report(err: unknown): Promise<void> {
    if (!this.#options.enabled || this.#closed.signal.aborted) return Promise.resolve();
    const now = performance.now();
    while (this.#sentAtMs.length > 0 && now - (this.#sentAtMs[0] ?? 0) > 60_000) this.#sentAtMs.shift();
    if (this.#sentAtMs.length >= (this.#options.maxPerMinute ?? DEFAULT_REPORTS_PER_MINUTE)) {
      this.#options.logger.debug('error report dropped: rate limit');
      return Promise.resolve();
    }
    this.#sentAtMs.push(now);
    let event: AgentEvent;
    try {
      event = this.toEvent(err);
    } catch (buildErr) {
      this.#options.logger.debug({ err: buildErr }, 'error report not built');
      return Promise.resolve();
    }
    const deadline = linkSignal([this.#closed.signal], REPORT_TIMEOUT_MS);
    const sending: Promise<void> = this.#options.client
      .postEvent(event, deadline.signal)
      .then(
        () => this.#options.logger.debug('error report sent'),
        (sendErr: unknown) => this.#options.logger.debug({ err: sendErr }, 'error report not sent'),
      )
      .finally(() => {
        deadline.dispose();
        this.#inFlight.delete(sending);
      });
    this.#inFlight.add(sending);
    return sending;
  }

  /** Waits up to `timeoutMs` (default 2000) for reports in flight, then abandons them; later reports are ignored. */
  async close(timeoutMs = 2000): Promise<void> {
    const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    await Promise.race([Promise.allSettled([...this.#inFlight]), timer]);
    this.#closed.abort();
  }
}
