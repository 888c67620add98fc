import { compiledChildPath } from '../common/compiled-child.js';

/**
 * Absolute path of the script processes' bootstrap, `child.cts` compiled to `child.cjs`
 * (see {@link compiledChildPath}: the build's file, or a cached transpile of the source).
 */
export function childBootstrapPath(): Promise<string> {
  return compiledChildPath(import.meta.url, 'child');
}
