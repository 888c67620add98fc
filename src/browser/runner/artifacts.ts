/** Files of a run in the temp dir (screenshots, the trace, videos), announced to the agent. */
import fs from 'node:fs';
import path from 'node:path';
import type { RunnerArtifact } from '../messages.js';
import { masksFor } from './masking.js';
import { type Any, artifacts, channel, workDir } from './state.js';

const artifactNames = new Set<string>();

/** Announces the file `name` of the temp dir's top level once, with its size; a missing file is skipped. */
export function announce(name: string, kind: RunnerArtifact['kind']): void {
  if (artifactNames.has(name)) return;
  let sizeBytes: number;
  try {
    sizeBytes = fs.statSync(path.join(workDir, name)).size;
  } catch {
    return;
  }
  artifactNames.add(name);
  const artifact = { name, kind, sizeBytes };
  artifacts.push(artifact);
  channel.send({ t: 'artifact', artifact });
}

/** A file the script wrote with `screenshot({ path })`, moved to the temp dir's top level if needed, announced. */
function announceScriptFile(file: unknown, kind: RunnerArtifact['kind']): void {
  if (typeof file !== 'string') return;
  const full = path.resolve(workDir, file);
  if (!full.startsWith(`${workDir}${path.sep}`)) return;
  let name = path.relative(workDir, full);
  if (name.includes(path.sep)) {
    const flat = `script-${artifacts.length}-${path.basename(full)}`;
    try {
      fs.renameSync(full, path.join(workDir, flat));
    } catch {
      return;
    }
    name = flat;
  }
  announce(name, kind);
}

/**
 * Wraps `screenshot` of Page, Locator and ElementHandle: the page's secret masks are added, and a
 * file the script saved in the temp dir is announced.
 *
 * @param client the client classes by name.
 */
export function installScreenshotHooks(client: Record<string, Any>): void {
  for (const cls of [client.Page, client.Locator, client.ElementHandle]) {
    const proto = cls?.prototype;
    const original = proto?.screenshot;
    if (typeof original !== 'function') continue;
    proto.screenshot = async function (this: Any, options?: Record<string, unknown>) {
      let page: Any = null;
      try {
        page = typeof this.page === 'function' ? this.page() : (this._page ?? this);
      } catch {
        page = null;
      }
      const masks = page ? masksFor(page) : [];
      const given = options ?? {};
      const withMasks =
        masks.length > 0 ? { ...given, mask: [...((given.mask as Any[]) ?? []), ...masks] } : given;
      const result = await original.call(this, withMasks);
      announceScriptFile(given.path, 'SCREENSHOT');
      return result;
    };
  }
}
