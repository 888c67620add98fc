import { parentPort, workerData } from 'node:worker_threads';
import { Scrubber } from '../../sandbox/scrub.js';
import { type BodyWorkInput, doBodyWork } from './body-work.js';

// Worker thread entry of off-thread.ts: evaluates one run's assertions and stored body.
const input = workerData as BodyWorkInput;
parentPort?.postMessage(doBodyWork(input, new Scrubber(input.secrets)));
