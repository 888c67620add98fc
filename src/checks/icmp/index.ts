export { createIcmpExecutor, IcmpExecutor, type IcmpExecutorOptions } from './executor.js';
export { packetLossPercent, summarizeLatency } from './statistics.js';
