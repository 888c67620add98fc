import { constants, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import { Piscina } from 'piscina';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { SECRET_HEADERS } from '../common/credential-headers.js';
import { REDACTED } from '../common/redaction.js';
import {
  MAX_SECRETS,
  MIN_CREDENTIAL_TOKEN_LENGTH,
  MIN_SECRET_LENGTH,
  Scrubber,
  credentialTokens,
  secretForms,
} from '../common/scrub.js';
import type { RunnerArtifact } from './messages.js';

/**
 * Scrubbing a browser run's artifacts before upload (docs/architecture.md, "Browser checks"):
 * Playwright traces (`trace.zip`), screenshots and videos lose every secret value, in every
 * encoding the Scrubber knows, and every credential header value, or are not uploaded at all.
 *
 * The work runs in a worker thread ({@link scrubArtifacts}): a trace is tens of megabytes of
 * JSON and images, and nothing the user controls may hold the agent's event loop. Everything
 * read from the runner's directory is untrusted (the runner shares its process with the
 * script): files are opened without following links and every size is bounded.
 */

/** What kind of file an artifact is; REPORT is any other file a run leaves (an HTML report). */
export type ArtifactKind = RunnerArtifact['kind'] | 'REPORT';

/** An artifact to scrub: its file name in the run's directory (no slashes) and its kind. */
export type ArtifactFile = { name: string; kind: ArtifactKind };

/** A scrubbed artifact, written to the output directory: `path` is absolute, `sizeBytes` its size. */
export type ScrubbedArtifact = { name: string; kind: ArtifactKind; path: string; sizeBytes: number };

/** What a scrub replaced (numbers only: a result never carries a value). */
export type ScrubCounts = {
  /** Secret values replaced by `*****`, occurrences in all artifacts. */
  secretValues: number;
  /** Credential header values (and cookie values) replaced by `*****`, occurrences. */
  credentialHeaders: number;
  /** Distinct secrets shorter than MIN_SECRET_LENGTH characters: too short to scrub, left as they are. */
  shortSecretsNotScrubbed: number;
};

/**
 * The outcome of {@link scrubArtifacts}. `leaked: true` means the artifacts must not be uploaded:
 * a secret (or a credential value) was still found after scrubbing, was found where it cannot
 * be removed (the bytes of an image), or the scrub could not finish; `files` is then empty and
 * the output files are deleted. `reason` says why in words, never with a value.
 */
export type ScrubOutcome = {
  files: ScrubbedArtifact[];
  counts: ScrubCounts;
  leaked: boolean;
  reason: string | null;
};

/** Options of {@link scrubArtifacts}. */
export type ScrubArtifactsOptions = {
  /** The run's directory holding the artifacts. */
  dir: string;
  files: ArtifactFile[];
  /** Secret values of the run (secret variables, `SERVICE_SECRET_*`/`OUTPOST_SECRET_*` values set at run time). */
  secrets: string[];
  /** Where the scrubbed files are written (created when missing); may be `dir` itself. */
  outDir: string;
  /**
   * The uid of the run that wrote the artifacts (its run user): a file another uid owns is refused.
   * Absent: any owner.
   */
  ownerUid?: number;
  /** Stops the scrub: the outcome is then `leaked: true` (nothing may be uploaded unscrubbed). */
  signal?: AbortSignal;
  /** Time the whole scrub may take, ms (default {@link SCRUB_TIMEOUT_MS}). */
  timeoutMs?: number;
};

/** Time one run's scrub may take by default, ms. */
export const SCRUB_TIMEOUT_MS = 120_000;
/** Largest artifact file read, bytes: four times the upload budget. */
export const MAX_ARTIFACT_BYTES = 600_000_000;
/** Largest trace entry once decompressed, bytes. */
export const MAX_ENTRY_BYTES = 256 * 1024 * 1024;
/** Most bytes all entries of one trace decompress to (a zip bomb is refused, not read). */
export const MAX_TRACE_UNCOMPRESSED_BYTES = 1024 * 1024 * 1024;
/** Most entries of one trace archive. */
export const MAX_TRACE_ENTRIES = 200_000;
/** Longest reason an outcome gives, characters. */
const MAX_REASON_CHARS = 500;
/** Heap of the artifact worker thread, MB. */
export const ARTIFACT_WORKER_HEAP_MB = 1024;

// ---------------------------------------------------------------------------------------------
// The worker pool (main thread side)

/** A task of the artifact worker (scrub-worker.ts). */
export type ArtifactTask =
  | ({ kind: 'scrub' } & Omit<ScrubArtifactsOptions, 'signal' | 'timeoutMs'>)
  | { kind: 'shrink'; path: string; outPath: string; level: ShrinkLevel };

/** How much of a trace {@link ArtifactTask} `shrink` drops: screencast frames, or frames and DOM snapshots. */
export type ShrinkLevel = 'FRAMES' | 'SNAPSHOTS';

let pool: Piscina | null = null;

/**
 * The artifact worker: one thread (scrubbing is CPU-bound and the agent has few cores), with a
 * heap of {@link ARTIFACT_WORKER_HEAP_MB}, ended after 10 s idle so a run's buffers do not stay.
 * A task stopped at its deadline takes its thread with it. Runs the built `scrub-worker.js`, or
 * from TypeScript sources `scrub-worker-ts.mjs`, which loads the `.ts` entry through tsx.
 */
function artifactWorkers(): Piscina {
  if (pool === null) {
    const here = fileURLToPath(import.meta.url);
    pool = new Piscina({
      filename: join(dirname(here), here.endsWith('.ts') ? 'scrub-worker-ts.mjs' : 'scrub-worker.js'),
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: 10_000,
      resourceLimits: { maxOldGenerationSizeMb: ARTIFACT_WORKER_HEAP_MB },
    });
  }
  return pool;
}

/**
 * Runs `task` in the artifact worker, stopped by `signal` or after `timeoutMs`.
 * @throws Error naming what stopped it (aborted, deadline, out of memory) or the worker's error.
 */
export async function runArtifactTask<T>(
  task: ArtifactTask,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<T> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const stop = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  try {
    return (await artifactWorkers().run(task, { signal: stop })) as T;
  } catch (err) {
    if (deadline.aborted) throw new Error(`the artifact work did not finish within ${timeoutMs} ms`);
    if (signal?.aborted) throw new Error('the artifact work was stopped');
    if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new Error(`the artifact work needed more than ${ARTIFACT_WORKER_HEAP_MB} MB`);
    }
    throw err;
  }
}

/**
 * Scrubs a run's artifacts into `outDir`, in the artifact worker thread (see
 * {@link scrubArtifactsHere} for what is done to each kind of file). Never rejects: anything that
 * goes wrong (a file missing or a link, a broken archive, a secret left, the deadline, the
 * signal) gives `leaked: true` with the reason, and no file to upload. The scrubbed files are
 * deleted then; a worker stopped in the middle of a write may still leave one behind, so the
 * caller discards `outDir` after a leaked outcome rather than reading it.
 */
export async function scrubArtifacts(options: ScrubArtifactsOptions): Promise<ScrubOutcome> {
  const { signal, timeoutMs = SCRUB_TIMEOUT_MS, ...rest } = options;
  try {
    return await runArtifactTask<ScrubOutcome>({ kind: 'scrub', ...rest }, timeoutMs, signal);
  } catch (err) {
    await removeOutputs(options.outDir, options.files, options.dir);
    const reason = `the artifacts could not be scrubbed: ${(err as Error).message}`;
    return {
      files: [],
      counts: { secretValues: 0, credentialHeaders: 0, shortSecretsNotScrubbed: 0 },
      leaked: true,
      // Short, so scrubbing it here costs the event loop nothing to speak of.
      reason: new Scrubber(options.secrets).cut(reason, MAX_REASON_CHARS),
    };
  }
}

/** Deletes the scrubbed copies (and half-written ones) of `files` in `outDir`, unless that is the input `dir`. */
async function removeOutputs(outDir: string, files: ArtifactFile[], dir: string | null): Promise<void> {
  for (const file of files) {
    if (!isPlainName(file.name)) continue;
    if (dir === null || outDir !== dir) await rm(join(outDir, file.name), { force: true });
    await rm(join(outDir, partialName(file.name)), { force: true });
  }
}

const partialName = (name: string) => `.${name}.scrubbing`;

/** True for a file name without a directory part: `trace.zip`, not `../x` or `a/b`. */
export function isPlainName(name: string): boolean {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    name.length <= 255 &&
    !/[/\\\0]/.test(name) &&
    name !== '.' &&
    name !== '..'
  );
}

// ---------------------------------------------------------------------------------------------
// Reading and writing archives (worker side)

/** One file of a ZIP archive, decompressed; `compressed` when it was stored deflated. */
export type ZipEntry = { name: string; data: Buffer; mtime: Date; compressed: boolean };

/**
 * Reads a regular file of at most `maxBytes` without following a link at its last component. It is
 * opened non-blocking: a FIFO or device a surviving process of the run swapped in is refused by the
 * `fstat` after the open, instead of blocking a libuv thread forever on the open or the read.
 *
 * @param ownerUid when given, the file must be owned by that uid (the run user that wrote it).
 * @throws Error when it is a link, not a regular file, has another owner, or is larger than
 *   `maxBytes`.
 */
export async function readArtifactFile(
  path: string,
  maxBytes = MAX_ARTIFACT_BYTES,
  ownerUid?: number,
): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new Error('not a regular file');
    // A file of the agent's or of another run, linked or swapped in, has another owner.
    if (ownerUid !== undefined && stat.uid !== ownerUid)
      throw new Error(`owned by uid ${stat.uid}, not the run's ${ownerUid}`);
    if (stat.size > maxBytes) throw new Error(`${stat.size} bytes, more than the ${maxBytes} read`);
    const data = Buffer.allocUnsafe(stat.size);
    let at = 0;
    while (at < data.length) {
      const { bytesRead } = await handle.read(data, at, data.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return data.subarray(0, at);
  } finally {
    await handle.close();
  }
}

/**
 * The entries of a ZIP archive, decompressed, bounded: at most {@link MAX_TRACE_ENTRIES} entries,
 * each at most {@link MAX_ENTRY_BYTES}, together {@link MAX_TRACE_UNCOMPRESSED_BYTES}. Directory
 * entries are skipped.
 * @throws Error when the archive is broken, encrypted, names a path outside itself, or is too large.
 */
export async function readZip(zip: Buffer): Promise<ZipEntry[]> {
  const file = await yauzl.fromBufferPromise(zip, { lazyEntries: true, validateEntrySizes: true });
  if (file.entryCount > MAX_TRACE_ENTRIES) {
    throw new Error(`the archive has ${file.entryCount} entries, more than ${MAX_TRACE_ENTRIES}`);
  }
  const entries: ZipEntry[] = [];
  let total = 0;
  for await (const entry of file.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    if (entry.uncompressedSize > MAX_ENTRY_BYTES) {
      throw new Error(`an entry of ${entry.uncompressedSize} bytes is more than ${MAX_ENTRY_BYTES}`);
    }
    total += entry.uncompressedSize;
    if (total > MAX_TRACE_UNCOMPRESSED_BYTES) {
      throw new Error(`the archive decompresses to more than ${MAX_TRACE_UNCOMPRESSED_BYTES} bytes`);
    }
    if (entry.isEncrypted()) throw new Error(`entry ${entry.fileName} is encrypted`);
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      throw new Error(`entry ${entry.fileName} uses compression method ${entry.compressionMethod}`);
    }
    // The entry's bytes straight from the archive, inflated in one native call bounded by the
    // size its header states (no stream of small chunks to gather).
    const { fileDataStart } = await file.readLocalFileHeaderPromise(entry, { minimal: true });
    const raw = zip.subarray(fileDataStart, fileDataStart + entry.compressedSize);
    if (raw.length !== entry.compressedSize) throw new Error(`entry ${entry.fileName} is cut short`);
    const data =
      entry.compressionMethod === 0
        ? raw
        : inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.uncompressedSize) });
    if (data.length !== entry.uncompressedSize) {
      throw new Error(`entry ${entry.fileName} is not the size its header states`);
    }
    entries.push({
      name: entry.fileName,
      data,
      mtime: entry.getLastModDate(),
      compressed: entry.compressionMethod !== 0,
    });
  }
  return entries;
}

/**
 * Already-compressed content (images, video, fonts, archives): stored, not deflated again.
 * Deflating a screencast frame costs more time than anything else in a scrub, and saves much
 * only on frames of a nearly blank page, which are a few kilobytes anyway.
 */
function isCompressedFormat(data: Buffer): boolean {
  return kindOfBinary(data) !== null;
}

/** The name of a known compressed binary format by its magic bytes, or null. */
function kindOfBinary(data: Buffer): string | null {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'JPEG';
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47) return 'PNG';
  if (data.length >= 6 && data.toString('latin1', 0, 4) === 'GIF8') return 'GIF';
  if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF') return 'RIFF';
  if (data.length >= 4 && data.readUInt32BE(0) === 0x1a45dfa3) return 'WebM';
  if (data.length >= 4 && data.toString('latin1', 0, 4) === 'wOF2') return 'WOFF2';
  if (data.length >= 4 && data.readUInt32BE(0) === 0x504b0304) return 'ZIP';
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) return 'gzip';
  return null;
}

/**
 * Writes `entries` as a ZIP archive at `path` (created with mode 0600; replaced when it exists):
 * each entry deflated when it was before, except already-compressed formats, which are stored.
 */
export async function writeZip(entries: ZipEntry[], path: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    zip.addBuffer(entry.data, entry.name, {
      mtime: entry.mtime,
      compress: entry.compressed && !isCompressedFormat(entry.data),
    });
  }
  zip.end();
  await writeStream(zip.outputStream, path);
}

async function writeStream(source: NodeJS.ReadableStream, path: string): Promise<void> {
  await rm(path, { force: true });
  const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  await new Promise<void>((resolve, reject) => {
    source.on('error', reject);
    out.on('error', reject);
    out.on('close', resolve);
    source.pipe(out);
  });
}

// ---------------------------------------------------------------------------------------------
// Searching bytes for many patterns at once (worker side)

/** Positions apart that the strided scan of {@link BytePatterns} reads a 3-byte key at. */
const STRIDE = 6;
/** Patterns at least this long are found by the strided scan; shorter ones by Buffer.indexOf. */
const STRIDED_MIN_LENGTH = STRIDE + 2;

/**
 * Byte patterns (each at least 3 bytes) searched for in one pass over the data, whatever their
 * number. The scan reads a 3-byte key every {@link STRIDE} bytes: a pattern of
 * {@link STRIDED_MIN_LENGTH} bytes or more, wherever it starts, covers one such position, so each
 * of its first STRIDE keys is marked (a bit per possible key) and a marked key is checked against
 * the patterns it may belong to. Shorter patterns, and a handful of patterns, are searched with
 * Buffer.indexOf (native, faster per pattern).
 */
export class BytePatterns {
  readonly #short: Buffer[] = [];
  readonly #long: Buffer[] = [];
  readonly #bits = new Uint32Array(1 << 19);
  readonly #byKey = new Map<number, Array<{ pattern: Buffer; offset: number }>>();

  constructor(patterns: Iterable<string | Buffer>) {
    const seen = new Set<string>();
    for (const pattern of patterns) {
      const bytes = Buffer.isBuffer(pattern) ? pattern : Buffer.from(pattern);
      const key = bytes.toString('latin1');
      if (bytes.length < 3 || seen.has(key)) continue;
      seen.add(key);
      if (bytes.length < STRIDED_MIN_LENGTH) {
        this.#short.push(bytes);
        continue;
      }
      this.#long.push(bytes);
      for (let offset = 0; offset < STRIDE; offset++) {
        const start = (bytes[offset]! << 16) | (bytes[offset + 1]! << 8) | bytes[offset + 2]!;
        this.#bits[start >>> 5]! |= 1 << (start & 31);
        const list = this.#byKey.get(start);
        if (list === undefined) this.#byKey.set(start, [{ pattern: bytes, offset }]);
        else list.push({ pattern: bytes, offset });
      }
    }
  }

  /** Number of distinct patterns. */
  get size(): number {
    return this.#short.length + this.#long.length;
  }

  /** True when `data` holds any pattern. */
  foundIn(data: Buffer): boolean {
    if (data.length < 3) return false;
    for (const pattern of this.#short) if (data.includes(pattern)) return true;
    if (this.#long.length <= 4) return this.#long.some((pattern) => data.includes(pattern));
    const bits = this.#bits;
    // A plain Uint8Array view: indexed reads of it stay on V8's fast path.
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.length);
    const n = bytes.length;
    for (let i = 0; i + 2 < n; i += STRIDE) {
      const key = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
      if ((bits[key >>> 5]! & (1 << (key & 31))) === 0) continue;
      for (const { pattern, offset } of this.#byKey.get(key) ?? []) {
        const start = i - offset;
        if (start < 0 || start + pattern.length > n) continue;
        if (data.compare(pattern, 0, pattern.length, start, start + pattern.length) === 0) return true;
      }
    }
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Scrubbing (worker side)

/** Names (lower case) whose string values are credentials in a trace: the headers, as names of `{name, value}` pairs or keys. */
const CREDENTIAL_KEYS: ReadonlySet<string> = SECRET_HEADERS;
/** A line that may carry a credential header, cookie or basic-auth password (a cheap test before parsing). */
const CREDENTIAL_HINT = new RegExp(
  [...SECRET_HEADERS, 'cookies', 'httpcredentials'].map((n) => n.replace(/[-]/g, '\\-')).join('|'),
  'i',
);
/** Deepest JSON nesting walked (DOM snapshots nest two levels per element). */
const MAX_JSON_DEPTH = 4_000;

/** The state of one scrub: the Scrubber, the credential values found, the counts. */
class ScrubContext {
  readonly scrubber: Scrubber;
  readonly counts: ScrubCounts;
  /** Credential values (and their tokens) found in traces, searched in the final scan. */
  readonly credentialValues = new Set<string>();

  constructor(secrets: string[]) {
    this.scrubber = new Scrubber(secrets);
    const short = new Set(
      secrets.filter((s) => typeof s === 'string' && s.length > 0 && s.length < MIN_SECRET_LENGTH),
    );
    this.counts = { secretValues: 0, credentialHeaders: 0, shortSecretsNotScrubbed: short.size };
  }

  /**
   * Records a credential value seen: its tokens (the token after `Bearer`, each cookie's value)
   * are scrubbed everywhere else too (a cookie's value in a snapshot's script), as long as the
   * Scrubber has room for more values (the secrets first); each is searched in the final scan
   * regardless. The whole value only when it has no token: a whole value holds its tokens, so
   * scrubbing them scrubs it, and every value more costs a pass over every text.
   */
  credential(value: string): void {
    if (value.length === 0 || value === REDACTED) return;
    const [whole, ...tokens] = credentialTokens(value);
    for (const token of tokens.length > 0 ? tokens : [whole as string]) {
      if (this.credentialValues.has(token)) continue;
      this.credentialValues.add(token);
      if (this.scrubber.secrets().length < MAX_SECRETS) this.scrubber.add(token);
    }
  }

  /** `text` scrubbed, counting the values replaced. */
  text(text: string): string {
    const out = this.scrubber.text(text);
    if (out !== text)
      this.counts.secretValues += Math.max(1, occurrences(out, REDACTED) - occurrences(text, REDACTED));
    return out;
  }

  /** The final scan's patterns: every form of every secret, and of every credential value of 6 characters or more. */
  finalPatterns(): BytePatterns {
    const forms: string[] = [];
    for (const secret of this.scrubber.secrets()) forms.push(...secretForms(secret));
    for (const value of this.credentialValues) {
      if (value.length >= MIN_CREDENTIAL_TOKEN_LENGTH) forms.push(...secretForms(value));
    }
    return new BytePatterns(forms);
  }
}

const occurrences = (text: string, what: string) => {
  let count = 0;
  for (let at = text.indexOf(what); at !== -1; at = text.indexOf(what, at + what.length)) count++;
  return count;
};

/** True when the name of a header (or a header record's key) is a credential header. */
const isCredentialName = (name: string) => CREDENTIAL_KEYS.has(name.trim().toLowerCase());

/**
 * A copy of a parsed trace record with its credential values replaced by `*****` and passed to
 * `onCredential`: the values of `{name, value}` pairs of credential headers, header records'
 * credential keys, `cookies[]` values and `httpCredentials.password`. Every other string (keys
 * too) goes through `text`, or is kept when `text` is null (collecting only).
 * @throws Error when the record nests deeper than MAX_JSON_DEPTH.
 */
function walkJson(
  value: unknown,
  depth: number,
  onCredential: (value: string) => void,
  text: ((text: string) => string) | null,
): unknown {
  if (typeof value === 'string') return text === null ? value : text(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_JSON_DEPTH) throw new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((v) => walkJson(v, depth + 1, onCredential, text));
  const record = value as Record<string, unknown>;
  const pairName = typeof record.name === 'string' ? record.name : null;
  const credentialPair = pairName !== null && isCredentialName(pairName) && typeof record.value === 'string';
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(record)) {
    const newKey = text === null ? key : text(key);
    if (key === 'value' && credentialPair) {
      onCredential(v as string);
      out[newKey] = REDACTED;
    } else if (isCredentialName(key) && (typeof v === 'string' || Array.isArray(v))) {
      for (const item of Array.isArray(v) ? v : [v]) if (typeof item === 'string') onCredential(item);
      out[newKey] = REDACTED;
    } else if (key === 'cookies' && Array.isArray(v)) {
      out[newKey] = v.map((cookie) => {
        if (
          cookie === null ||
          typeof cookie !== 'object' ||
          typeof (cookie as { value?: unknown }).value !== 'string'
        ) {
          return walkJson(cookie, depth + 2, onCredential, text);
        }
        const { value: cookieValue, ...restOfCookie } = cookie as Record<string, unknown>;
        onCredential(cookieValue as string);
        const walked = walkJson(restOfCookie, depth + 2, onCredential, text) as Record<string, unknown>;
        return { ...walked, value: REDACTED };
      });
    } else if (key === 'httpCredentials' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const { password, ...restOfCredentials } = v as Record<string, unknown>;
      const walked = walkJson(restOfCredentials, depth + 1, onCredential, text) as Record<string, unknown>;
      if (typeof password === 'string') onCredential(password);
      out[newKey] = password === undefined ? walked : { ...walked, password: REDACTED };
    } else {
      out[newKey] = walkJson(v, depth + 1, onCredential, text);
    }
  }
  return out;
}

/** Kinds of trace entries by name: NDJSON event logs, one JSON document, or anything else. */
function entryFormat(name: string): 'NDJSON' | 'JSON' | 'OTHER' {
  if (name.endsWith('.trace') || name.endsWith('.network')) return 'NDJSON';
  if (name.endsWith('.stacks')) return 'JSON';
  return 'OTHER';
}

/** First pass: the credential values of one NDJSON or JSON entry, recorded in `ctx`. */
function collectCredentials(entry: ZipEntry, ctx: ScrubContext): void {
  const format = entryFormat(entry.name);
  if (format === 'OTHER') return;
  const onCredential = (value: string) => ctx.credential(value);
  const lines = format === 'NDJSON' ? entry.data.toString('utf8').split('\n') : [entry.data.toString('utf8')];
  for (const line of lines) {
    if (!CREDENTIAL_HINT.test(line)) continue;
    try {
      walkJson(JSON.parse(line), 0, onCredential, null);
    } catch {
      // Unparseable: dropped in the second pass.
    }
  }
}

/**
 * One NDJSON line (or one JSON document) scrubbed JSON-aware, so the viewer still reads it: a
 * line that may carry credentials is parsed, its credential values replaced by name and every
 * string (keys too) scrubbed; any other line is scrubbed as text in one pass, each match inside
 * a string, and kept when it still parses (else parsed and walked too). A line that holds
 * nothing to scrub is kept byte for byte; one that does not parse and needs scrubbing is
 * dropped (null): it cannot be scrubbed knowing its structure.
 */
function scrubJsonLine(line: string, ctx: ScrubContext): string | null {
  if (line.trim() === '') return line;
  // A line without credential names is scrubbed as text, in one pass: its JSON escapes decode
  // once in Scrubber.text, as parsing decodes them, and each match is replaced whole by
  // `*****`, inside a string. Kept when it still parses. Not so a line with an escaped
  // backslash: a string holding an escape of its own is decoded once more when scrubbed parsed.
  if (!CREDENTIAL_HINT.test(line) && !line.includes('\\\\')) {
    const scrubbed = ctx.scrubber.text(line);
    if (scrubbed === line) return line;
    if (parses(scrubbed)) {
      ctx.counts.secretValues += Math.max(1, occurrences(scrubbed, REDACTED) - occurrences(line, REDACTED));
      return scrubbed;
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  try {
    const walked = walkJson(
      parsed,
      0,
      () => {
        ctx.counts.credentialHeaders++;
      },
      (text) => ctx.text(text),
    );
    return JSON.stringify(walked);
  } catch {
    return null;
  }
}

/** True when `text` is one JSON value. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Entry content that is text (valid UTF-8 without NUL bytes), not an image or other binary. */
function isText(data: Buffer): boolean {
  return kindOfBinary(data) === null && isUtf8(data) && !data.includes(0);
}

/**
 * Scrubs one trace entry in place of its data: event logs JSON-aware, other text as text.
 * Binary entries (images, fonts) stay as they are: a secret's bytes in one cannot be removed
 * without breaking the file, and the final scan fails the artifacts closed when it finds one.
 */
function scrubEntry(entry: ZipEntry, ctx: ScrubContext): void {
  const format = entryFormat(entry.name);
  if (format !== 'OTHER' && isUtf8(entry.data)) {
    const text = entry.data.toString('utf8');
    if (format === 'NDJSON') {
      const out: string[] = [];
      for (const line of text.split('\n')) {
        const scrubbed = scrubJsonLine(line, ctx);
        if (scrubbed !== null) out.push(scrubbed);
      }
      entry.data = Buffer.from(out.join('\n'));
      return;
    }
    entry.data = Buffer.from(scrubJsonLine(text, ctx) ?? '');
    return;
  }
  if (isText(entry.data)) {
    const text = entry.data.toString('utf8');
    const scrubbed = ctx.text(text);
    if (scrubbed !== text) entry.data = Buffer.from(scrubbed);
  }
}

/**
 * The scrub itself, run in the artifact worker (see {@link scrubArtifacts}):
 *
 * - TRACE (a ZIP archive): every entry read (bounded); a first pass over the event logs
 *   (`*.trace`, `*.network`, `*.stacks`) collects credential values (header values, cookies,
 *   basic-auth passwords), which are then scrubbed everywhere like secrets; the event logs are
 *   scrubbed JSON-aware (strings only, credential values by name), text resources as text;
 *   binary resources (images, fonts) stay as they are, and the final scan fails the artifacts
 *   closed when one holds a secret's bytes. Rewritten with the same entry names, so the trace
 *   viewer loads every resource.
 * - SCREENSHOT, VIDEO, REPORT: a text file (a report) scrubbed as text, anything else copied as
 *   it is and searched in the final scan, where a secret's bytes fail the artifacts closed.
 *
 * Then the final scan: each written file is read back, every archive entry decompressed, and
 * every byte (entry names too) searched for every form of every secret and credential value
 * ({@link secretForms}). Any hit, or any failure, gives `leaked: true` and no files.
 */
export async function scrubArtifactsHere(
  task: Omit<ScrubArtifactsOptions, 'signal' | 'timeoutMs'>,
): Promise<ScrubOutcome> {
  const ctx = new ScrubContext(task.secrets.filter((s) => typeof s === 'string'));
  const fail = async (reason: string): Promise<ScrubOutcome> => {
    await removeOutputs(task.outDir, task.files, task.dir);
    // Names of artifacts and entries are the script's to choose: the reason is scrubbed too.
    return {
      files: [],
      counts: ctx.counts,
      leaked: true,
      reason: ctx.scrubber.cut(reason, MAX_REASON_CHARS),
    };
  };
  if (ctx.scrubber.overflowed) {
    await removeOutputs(task.outDir, task.files, task.dir);
    const reason = `the secrets cannot be scrubbed: ${ctx.scrubber.overflowReason}`;
    return { files: [], counts: ctx.counts, leaked: true, reason };
  }
  const bad = task.files.find((f) => !isPlainName(f.name));
  if (bad !== undefined) return fail('an artifact name is not a plain file name');
  if (new Set(task.files.map((f) => f.name)).size !== task.files.length)
    return fail('two artifacts have the same name');
  try {
    await mkdir(task.outDir, { recursive: true });
    // Read everything first: credential values found in any trace are scrubbed in all of them.
    const inputs: Array<{ file: ArtifactFile; data: Buffer; entries: ZipEntry[] | null }> = [];
    for (const file of task.files) {
      let data: Buffer;
      try {
        data = await readArtifactFile(join(task.dir, file.name), MAX_ARTIFACT_BYTES, task.ownerUid);
      } catch (err) {
        return fail(`artifact ${file.name} could not be read: ${(err as Error).message}`);
      }
      let entries: ZipEntry[] | null = null;
      if (file.kind === 'TRACE') {
        try {
          entries = await readZip(data);
        } catch (err) {
          return fail(`trace ${file.name} could not be read as a ZIP archive: ${(err as Error).message}`);
        }
      }
      inputs.push({ file, data, entries });
    }
    for (const input of inputs) for (const entry of input.entries ?? []) collectCredentials(entry, ctx);
    const files: ScrubbedArtifact[] = [];
    for (const input of inputs) {
      const { file } = input;
      const partial = join(task.outDir, partialName(file.name));
      if (input.entries !== null) {
        for (const entry of input.entries) scrubEntry(entry, ctx);
        await writeZip(input.entries, partial);
      } else {
        // A text file (an HTML report) is scrubbed as text; images and video are searched in the final scan.
        const data = isText(input.data) ? Buffer.from(ctx.text(input.data.toString('utf8'))) : input.data;
        await rm(partial, { force: true });
        await writeFile(partial, data, { flag: 'wx', mode: 0o600 });
      }
      input.data = Buffer.alloc(0);
      input.entries = null;
      // Written under a partial name, renamed once complete.
      const path = join(task.outDir, file.name);
      await rename(partial, path);
      files.push({ name: file.name, kind: file.kind, path, sizeBytes: 0 });
    }
    const leak = await finalScan(files, ctx.finalPatterns());
    if (leak !== null) return fail(leak);
    for (const file of files) file.sizeBytes = (await stat(file.path)).size;
    return { files, counts: ctx.counts, leaked: false, reason: null };
  } catch (err) {
    return fail(`the artifacts could not be scrubbed: ${(err as Error).message}`);
  }
}

/**
 * Reads every written file back (each archive's entries decompressed, their names too) and
 * searches every byte for `patterns`. Returns null, or which file still holds a value.
 */
async function finalScan(files: ScrubbedArtifact[], patterns: BytePatterns): Promise<string | null> {
  for (const file of files) {
    const data = await readArtifactFile(file.path);
    if (file.kind !== 'TRACE') {
      if (patterns.foundIn(data)) {
        return `a secret or credential value is in the bytes of ${file.kind.toLowerCase()} ${file.name}, which cannot be scrubbed`;
      }
      continue;
    }
    // An archive by its entries: its own bytes are those entries (compressed or stored) and their names.
    for (const entry of await readZip(data)) {
      if (patterns.foundIn(Buffer.from(entry.name)) || patterns.foundIn(entry.data)) {
        const binary = isText(entry.data) ? null : (kindOfBinary(entry.data) ?? 'binary');
        return binary === null
          ? `the final scan found a secret or credential value in ${file.name} (entry ${entry.name})`
          : `a secret or credential value is in the bytes of ${binary} entry ${entry.name} of ${file.name}, which cannot be scrubbed`;
      }
    }
  }
  return null;
}
