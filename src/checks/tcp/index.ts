export { createTcpExecutor, TcpExecutor, type TcpExecutorOptions } from './executor.js';
