/** A child AbortSignal tied to its parents, to be disposed once its operation ends. */
export type LinkedSignal = {
  readonly signal: AbortSignal;
  /** Aborts the child (not the parents) and unlinks it. */
  abort(reason?: unknown): void;
  /** Unlinks the child from its parents and clears its timer. Idempotent; call when the operation ends. */
  dispose(): void;
};

/**
 * An AbortSignal that aborts when any parent aborts (with that parent's reason) or, when
 * `timeoutMs` is given, after that many milliseconds (reason: a `TimeoutError` DOMException).
 *
 * Used instead of `AbortSignal.any([longLived, …])`: on Node 20 every `any()` leaves an
 * entry in the long-lived parent's dependant set that is never removed (nodejs/node#55351),
 * so an agent running a job per second would grow without bound. Here the parent holds a
 * plain listener until `dispose()` removes it. The timer is unref()ed.
 */
export function linkSignal(parents: readonly AbortSignal[], timeoutMs?: number): LinkedSignal {
  const controller = new AbortController();
  const links: { parent: AbortSignal; onAbort: () => void }[] = [];
  let timer: NodeJS.Timeout | undefined;

  const dispose = () => {
    for (const { parent, onAbort } of links) parent.removeEventListener('abort', onAbort);
    links.length = 0;
    clearTimeout(timer);
  };
  const abort = (reason: unknown) => {
    controller.abort(reason);
    dispose();
  };

  for (const parent of parents) {
    if (parent.aborted) {
      abort(parent.reason);
      break;
    }
    const onAbort = () => abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    links.push({ parent, onAbort });
  }
  if (timeoutMs !== undefined && !controller.signal.aborted) {
    timer = setTimeout(
      () => abort(new DOMException(`The operation timed out after ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
    timer.unref();
  }
  return { signal: controller.signal, abort, dispose };
}
