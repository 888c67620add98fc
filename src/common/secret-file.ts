import { closeSync, readFileSync } from 'node:fs';
import { OutpostError } from './errors.js';

/**
 * The value of the secret variable `name` (an API key, a token), given either in `name` itself or in a
 * file named by `name_FILE`: a mounted Kubernetes Secret, or `/dev/fd/<n>` (also `/proc/self/fd/<n>`), a
 * descriptor the image's entrypoint hands the secret over in (read once, then closed, so no child inherits
 * it). Surrounding whitespace is trimmed; empty means unset.
 * @returns the value, or undefined when neither is set.
 * @throws OutpostError OUTPOST_ERR_CONFIG when both are set, or the file cannot be read (the value itself is
 *   never in the message).
 */
export function secretVariable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const direct = env[name]?.trim() || undefined;
  const file = env[`${name}_FILE`]?.trim();
  if (file === undefined || file === '') return direct;
  const invalid = (why: string) =>
    new OutpostError('OUTPOST_ERR_CONFIG', `invalid agent configuration:\n- ${why}`);
  if (direct !== undefined) throw invalid(`${name} and ${name}_FILE are both set: set one of them`);
  const fd = /^\/(?:dev|proc\/self)\/fd\/([0-9]{1,4})$/.exec(file)?.[1];
  try {
    if (fd === undefined) return readFileSync(file, 'utf8').trim() || undefined;
    const value = readFileSync(Number(fd), 'utf8');
    closeSync(Number(fd));
    return value.trim() || undefined;
  } catch (err) {
    throw invalid(
      `${name}_FILE must name a readable file holding the key; ${file}: ${(err as Error).message}`,
    );
  }
}
