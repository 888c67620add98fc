import { Scrubber } from '../../sandbox/scrub.js';
import { type BodyWorkInput, type BodyWorkOutput, doBodyWork } from './body-work.js';

/** Body worker task (off-thread.ts runs it in a piscina thread): one run's assertions and stored body. */
export default function bodyWork(input: BodyWorkInput): BodyWorkOutput {
  return doBodyWork(input, new Scrubber(input.secrets));
}
