export * from './assertion.js';
export * from './browser-result.js';
export * from './enums.js';
export * from './job.js';
export * from './messages.js';
export * from './result.js';
export * from './dns-result.js';
export * from './http-result.js';
export * from './tcp-result.js';
export * from './schema.js';
// SSL and TRACEROUTE monitors.
export * from './ssl.js';
export * from './traceroute.js';
