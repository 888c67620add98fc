export { type ComparisonFailure, compare, equalsTarget } from './comparisons.js';
export {
  type AssertionSourceReader,
  type AssertionSources,
  type AssertionsOutcome,
  compileRegex,
  evaluateAssertions,
  jsonPathSource,
  propertySource,
  valueSource,
} from './engine.js';
export { queryJsonPath } from './json-path.js';
