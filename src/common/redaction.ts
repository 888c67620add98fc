/**
 * What Outpost writes in place of a secret everywhere it shows one: scrubbed script output and
 * logs, masked credential headers, API answers for secret variables and alert-channel
 * secrets, the agent's printed configuration and error reports. One literal, so a reader
 * (and a test searching outputs) recognises every redaction by the same five asterisks.
 */
export const REDACTED = '*****';
