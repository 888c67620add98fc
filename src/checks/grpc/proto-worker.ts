import { doProtoWork, type Decoded, type Encoded, type ProtoFailure, type ProtoTask } from './proto-work.js';

/** Entry of the proto worker threads (off-thread.ts runs it in a piscina pool). */
export default function work(task: ProtoTask): Encoded | Decoded | ProtoFailure {
  return doProtoWork(task);
}
