import { pino, type Logger } from 'pino';
import { REDACTED } from './redaction.js';

/** Log levels accepted in `LOG_LEVEL` (docs/architecture.md, "The agent"), mapped to pino's. */
export const LOG_LEVELS = {
  DEBUG: 'debug',
  LOG: 'info',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
} as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

export type { Logger };

/**
 * The root JSON logger: one line per event on stdout, errors under `err`,
 * secrets redacted by path. Components take `logger.child({ component })`.
 */
export function createLogger(options: {
  level: LogLevelName;
  name: string;
  destination?: pino.DestinationStream;
}): Logger {
  return pino(
    {
      name: options.name,
      level: LOG_LEVELS[options.level],
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['apiKey', '*.apiKey', 'config.API_KEY', 'headers.authorization', '*.headers.authorization'],
        censor: REDACTED,
      },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}
