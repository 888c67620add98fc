/**
 * The console and stdout/stderr of user code in a child process: every write becomes a log line
 * on the channel. Shared by the script processes and the browser runners.
 *
 * Bundled into the children: it may import only `node:` built-ins.
 */
import nodeConsole from 'node:console';

/** The levels of a log line (the same four in src/sandbox/messages.ts and src/browser/messages.ts). */
export type ConsoleLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** A console for user code and the stream writes that go with it. */
export type ScriptConsole = {
  console: Console;
  stdoutWrite: typeof process.stdout.write;
  stderrWrite: typeof process.stderr.write;
};

/**
 * A console whose log/info go out as INFO, warn as WARN, error/trace/assert as ERROR and debug as
 * DEBUG, and `process.stdout.write` (INFO) / `process.stderr.write` (ERROR) replacements. Also
 * creates `process.stdout` and `process.stderr` now (tens of milliseconds, better paid while warm).
 *
 * @param emit sends one chunk of text (a console call's line, a stream write) at a level.
 */
export function createScriptConsole(emit: (level: ConsoleLevel, text: string) => void): ScriptConsole {
  const sink = (level: ConsoleLevel) => ({
    write(chunk: unknown): boolean {
      emit(level, typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return true;
    },
  });
  const make = (stdout: ConsoleLevel, stderr: ConsoleLevel) =>
    new nodeConsole.Console({
      stdout: sink(stdout) as unknown as NodeJS.WritableStream,
      stderr: sink(stderr) as unknown as NodeJS.WritableStream,
      ignoreErrors: false,
      colorMode: false,
    });
  const scriptConsole = make('INFO', 'ERROR');
  scriptConsole.debug = make('DEBUG', 'DEBUG').log;
  scriptConsole.warn = make('WARN', 'WARN').warn;
  const streamWrite = (level: ConsoleLevel) =>
    ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
      sink(level).write(chunk);
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    }) as typeof process.stdout.write;
  void process.stdout;
  void process.stderr;
  return { console: scriptConsole, stdoutWrite: streamWrite('INFO'), stderrWrite: streamWrite('ERROR') };
}

/** Makes `made` the global console and the writes of `process.stdout` and `process.stderr`. */
export function installScriptConsole(made: ScriptConsole): void {
  globalThis.console = made.console;
  process.stdout.write = made.stdoutWrite;
  process.stderr.write = made.stderrWrite;
}
