export { createDnsExecutor, DnsExecutor, type DnsExecutorOptions } from './executor.js';
