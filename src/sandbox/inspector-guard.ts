let installed = false;

/**
 * Stops SIGUSR1 from opening this process's inspector (Node opens one on 127.0.0.1:9229 on
 * SIGUSR1 unless a JavaScript listener for the signal exists or it runs with
 * `--disable-sigusr1`, Node ≥ 22.14). An inspector lets whoever reaches it run code as the
 * agent and read its environment (`API_KEY`), so a process that runs user scripts must never
 * open one on a signal. Installs one listener that ignores the signal; idempotent. Verified on
 * Node 20 and 24 by test/sandbox/escape.test.ts.
 */
export function guardInspectorSignal(): void {
  if (installed) return;
  installed = true;
  process.on('SIGUSR1', () => {});
}
