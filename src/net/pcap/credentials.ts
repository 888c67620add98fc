import { SECRET_HEADERS } from '../../common/credential-headers.js';

/** Byte written over a masked credential byte: `*`, as the scrubber masks secrets. */
const MASK = 0x2a;
const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HT = 0x09;
const COLON = 0x3a;

/** RFC 9110 §5.6.2 tchar: the bytes a header name is made of. */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TOKEN[c.charCodeAt(0)] = 1;
}

/** The state of {@link CredentialHeaderMasker} between two bytes of a stream. */
enum State {
  /** At the start of a line: a header name may begin. */
  LineStart,
  /** Reading what may be a header name. */
  Name,
  /** Spaces after a name, before its colon (not valid HTTP, tolerated by some parsers). */
  NameSpace,
  /** Spaces after a credential header's colon (or a folded line's indent): kept. */
  ValueStart,
  /** Inside a credential header's value: every byte up to the line end is masked. */
  Value,
  /** Inside any other line: nothing masked up to its end. */
  Skip,
}

/**
 * Masks the values of credential header lines (`Authorization`, `Proxy-Authorization`,
 * `Cookie`, `Set-Cookie`, `x-api-key`: {@link SECRET_HEADERS}, any letter case) in one
 * direction of one TCP stream, fed in stream order in pieces of any size: a header line split
 * across segments is masked in every piece. Each value byte (from its first non-blank byte to
 * the line end, CR and LF kept) becomes `*`, so lengths stay as they are. A continuation line (starting
 * with a space or tab, RFC 9112 obs-fold) of a credential header is masked too. Where the
 * stream's position is unknown (after a gap), {@link lost} masks up to the next line end.
 *
 * Works on HTTP/1 text (requests, responses, and any line-oriented protocol using the same
 * form); HTTP/2 (HPACK) and TLS are not readable and left as they are.
 */
export class CredentialHeaderMasker {
  #state: State = State.LineStart;
  /** The line before was a credential header: a folded continuation is masked. */
  #credentialLine = false;
  #name = '';
  readonly #names: ReadonlySet<string>;
  readonly #longest: number;

  constructor(names: ReadonlySet<string> = SECRET_HEADERS) {
    this.#names = new Set([...names].map((name) => name.toLowerCase()));
    this.#longest = Math.max(0, ...[...this.#names].map((name) => name.length));
  }

  /** Bytes went missing before the next piece: mask up to the next line end, as if in a value. */
  lost(): void {
    this.#state = State.Value;
    this.#credentialLine = true;
  }

  /**
   * Masks credential values in `data[start, end)` in place, as the next bytes of the stream.
   * Calls `masked(index)` for each byte it masks (in order).
   */
  feed(data: Buffer, start = 0, end = data.length, masked?: (index: number) => void): void {
    for (let i = start; i < end; i++) {
      const byte = data[i] as number;
      switch (this.#state) {
        case State.LineStart:
          if (byte === LF) {
            this.#credentialLine = false;
          } else if (byte === CR) {
            // part of an empty line's CRLF
          } else if ((byte === SP || byte === HT) && this.#credentialLine) {
            this.#state = State.ValueStart;
          } else if (TOKEN[byte] === 1) {
            this.#name = String.fromCharCode(byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte);
            this.#state = State.Name;
          } else {
            this.#state = State.Skip;
          }
          break;
        case State.Name:
          if (TOKEN[byte] === 1 && this.#name.length < this.#longest) {
            this.#name += String.fromCharCode(byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte);
          } else if (byte === COLON) {
            this.#enterValue();
          } else if (byte === SP || byte === HT) {
            this.#state = State.NameSpace;
          } else {
            this.#endOrSkip(byte);
          }
          break;
        case State.NameSpace:
          if (byte === COLON) this.#enterValue();
          else if (byte !== SP && byte !== HT) this.#endOrSkip(byte);
          break;
        case State.ValueStart:
          if (byte === LF) {
            this.#state = State.LineStart;
          } else if (byte !== CR && byte !== SP && byte !== HT) {
            this.#state = State.Value;
            data[i] = MASK;
            masked?.(i);
          }
          break;
        case State.Value:
          if (byte === LF) {
            this.#state = State.LineStart;
          } else if (byte !== CR) {
            data[i] = MASK;
            masked?.(i);
          }
          break;
        case State.Skip: {
          // Nothing to mask before the line ends: jump to it.
          const lf = byte === LF ? i : data.indexOf(LF, i);
          if (lf === -1 || lf >= end) {
            i = end;
            break;
          }
          i = lf;
          this.#state = State.LineStart;
          this.#credentialLine = false;
          break;
        }
      }
    }
  }

  #enterValue(): void {
    this.#credentialLine = this.#names.has(this.#name);
    this.#state = this.#credentialLine ? State.ValueStart : State.Skip;
  }

  #endOrSkip(byte: number): void {
    this.#credentialLine = false;
    this.#state = byte === LF ? State.LineStart : State.Skip;
  }
}
