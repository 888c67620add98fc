import { compiledChildPath } from '../common/compiled-child.js';

/**
 * Absolute path of the script processes' bootstrap, `child/main.ts` bundled to `child.cjs`
 * (see {@link compiledChildPath}: the build's file, or a cached bundle of the sources).
 */
export function childBootstrapPath(): Promise<string> {
  return compiledChildPath(import.meta.url, 'child');
}
