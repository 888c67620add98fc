import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BytePatterns } from './byte-patterns.js';
import { collectCredentials, isText, scrubEntry } from './entries.js';
import { isPlainName, MAX_REASON_CHARS, partialName, removeOutputs } from './outputs.js';
import { ScrubContext } from './scrub-context.js';
import type { ArtifactFile, ScrubArtifactsOptions, ScrubbedArtifact, ScrubOutcome } from './types.js';
import {
  kindOfBinary,
  MAX_ARTIFACT_BYTES,
  readArtifactFile,
  readZip,
  writeZip,
  type ZipEntry,
} from './zip.js';

/**
 * The scrub itself, run in the artifact worker (see `scrubArtifacts` of ../trace-scrub.ts):
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
 * (`secretForms` of src/common/scrub.ts). Any hit, or any failure, gives `leaked: true` and no files.
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
