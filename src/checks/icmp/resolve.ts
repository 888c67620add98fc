import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { raceAbort } from '../../common/abort.js';
import { OutpostError } from '../../common/errors.js';
import { ResolveError } from '../../net/resolve.js';

/** An address to ping and how it was found. */
export type ResolvedTarget = {
  address: string;
  family: 4 | 6;
  /** Time spent in the resolver, ms; 0 for an IP literal. */
  dnsResolutionTimeMs: number;
};

/**
 * Resolves `hostname` to one address of `family` with the system resolver (getaddrinfo, so
 * /etc/hosts counts). An IP literal is used as it is, whatever `family` says, and costs
 * 0 ms. The time is measured with performance.now().
 * @throws ResolveError when the name has no address of that family; OUTPOST_ERR_ABORTED.
 */
export async function resolveTarget(
  hostname: string,
  family: 4 | 6,
  signal: AbortSignal,
): Promise<ResolvedTarget> {
  const literal = isIP(hostname);
  if (literal === 4 || literal === 6) return { address: hostname, family: literal, dnsResolutionTimeMs: 0 };
  const started = performance.now();
  try {
    const found = await raceAbort(lookup(hostname, { family }), signal);
    return { address: found.address, family, dnsResolutionTimeMs: performance.now() - started };
  } catch (err) {
    if (err instanceof OutpostError) throw err;
    const code = (err as { code?: unknown }).code;
    throw new ResolveError(hostname, typeof code === 'string' ? code : 'EUNKNOWN', { cause: err });
  }
}
