import type { Assertion } from '../../protocol/index.js';
import type { Scrubber } from '../../common/scrub.js';
import { isTextual } from '../api/request.js';
import { type AssertionsOutcome, evaluateAssertions } from './engine.js';
import { type HttpAssertionInput, httpAssertionSources } from './http-sources.js';

/**
 * The response body: as text already decoded (`textual` false: decoded as latin1, never stored),
 * or as the bytes read, decoded by the body work (UTF-8 when textual by `contentType` or content).
 */
export type BodyInput =
  | { text: string; textual: boolean }
  | { bytes: Uint8Array; contentType: string | undefined };

/** What one run hands to the body work: its assertions, the response, its secrets and the body limit. */
export type BodyWorkInput = Omit<HttpAssertionInput, 'bodyText'> & {
  body: BodyInput;
  assertions: Assertion[];
  /** The run's secret values (see Scrubber.secrets). */
  secrets: string[];
  /** Bytes (UTF-8) of a textual body kept in the result (scrubbed, then cut), or null to keep none. */
  storedBodyMaxBytes: number | null;
};

/** The evaluated assertions and the body as stored (scrubbed and cut), or null. */
export type BodyWorkOutput = {
  assertions: AssertionsOutcome;
  storedBody: string | null;
  storedTruncated: boolean;
};

/** The body as text and whether it is textual (stored), decoding bytes when given bytes. */
export function decodeBody(body: BodyInput): { bodyText: string; textual: boolean } {
  if ('text' in body) return { bodyText: body.text, textual: body.textual };
  const bytes = Buffer.from(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength);
  const textual = isTextual(body.contentType, bytes);
  return { bodyText: bytes.toString(textual ? 'utf8' : 'latin1'), textual };
}

/** Evaluates the assertions over the response and scrubs and cuts the body to store. */
export function doBodyWork(input: BodyWorkInput, scrubber: Scrubber): BodyWorkOutput {
  const { bodyText, textual } = decodeBody(input.body);
  const sources = httpAssertionSources({ ...input, bodyText });
  const assertions = evaluateAssertions(input.assertions, sources, { scrubber });
  if (input.storedBodyMaxBytes === null || !textual) {
    return { assertions, storedBody: null, storedTruncated: false };
  }
  return { assertions, ...storedBodyOf(bodyText, input.storedBodyMaxBytes, scrubber) };
}

/**
 * The body as a result stores it: scrubbed, then cut to `maxBytes` UTF-8 bytes, with no start
 * of a secret left at the cut (Scrubber.cut, Scrubber.maskTail).
 */
export function storedBodyOf(
  bodyText: string,
  maxBytes: number,
  scrubber: Scrubber,
): { storedBody: string; storedTruncated: boolean } {
  const storedTruncated = bodyText.length > maxBytes || Buffer.byteLength(bodyText) > maxBytes;
  let storedBody = scrubber.cut(bodyText, maxBytes);
  if (storedBody.length > 0 && storedBody !== bodyText && storedBody.endsWith('…')) {
    storedBody = storedBody.slice(0, -1);
  }
  if (Buffer.byteLength(storedBody) > maxBytes) {
    storedBody = scrubber.maskTail(Buffer.from(storedBody).subarray(0, maxBytes).toString('utf8'));
  }
  return { storedBody, storedTruncated };
}
