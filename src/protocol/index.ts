export * from './assertion.js';
export * from './enums.js';
export * from './job.js';
export * from './messages.js';
export * from './result.js';
