import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type JsonValue, query } from 'jsonpath-rfc9535';
import parse from 'jsonpath-rfc9535/parser';
import { RE2JS } from 're2js';

const LENGTH_SUFFIX = '.length';

/**
 * Regex work one JSONPath may do in its match() and search() calls, in units of one RE2
 * instruction over one character: each call costs (instructions + 16) × (text length + 1) and
 * each pattern compiled 100 × a bound of its instructions, charged before it is compiled (see
 * patternSizeBound; RE2 is linear in both; at re2js's slowest about
 * 50,000 units a millisecond, so this bounds the regex time of a query to some 20 ms). Past it
 * the query stops with {@link JsonPathLimitError}.
 */
export const MAX_JSONPATH_REGEX_WORK = 1_000_000;

/** Options of {@link queryJsonPath}. */
export type JsonPathOptions = {
  /**
   * Limit of the regex work of match() and search() (default {@link MAX_JSONPATH_REGEX_WORK}).
   * Infinity only where the evaluation runs under a deadline off the agent's thread.
   */
  maxRegexWork?: number;
};

/** A JSONPath that was valid but stopped at a limit (its message says which). */
export class JsonPathLimitError extends Error {}

type FunctionDeclaration = {
  declaration: (ctx: unknown, ...args: unknown[]) => unknown;
  definition: { parameters: string[]; returnType: string };
};

/** The pieces of jsonpath-rfc9535 that its own `exec` puts together, so match() and search() can be ours. */
type Evaluator = {
  parse: (expression: string) => unknown;
  visitQuery: (
    ctx: unknown,
    root: unknown,
    input: unknown,
    node: unknown,
    cb: (value: unknown) => void,
  ) => void;
  Stack: new () => unknown;
  count: FunctionDeclaration;
  length: FunctionDeclaration;
  value: FunctionDeclaration;
};

/**
 * jsonpath-rfc9535 runs match() and search() with JavaScript's backtracking RegExp (a pattern
 * like `(a+)+$` over a value the target controls would hold the event loop) and has no option
 * to replace it. Its evaluator takes the functions from a context built by `exec`, so the query
 * is run here through the same modules (its CommonJS build, by file: the package exports only
 * `.` and `./parser`) with a context whose match() and search() are RE2. Null when these
 * modules are not found (a changed layout): JSONPaths without match() or search() then run
 * through `query`, and those with them fail rather than backtrack.
 */
const evaluator: Evaluator | null = (() => {
  try {
    const require = createRequire(import.meta.url);
    const root = dirname(require.resolve('jsonpath-rfc9535'));
    const load = (path: string) => require(join(root, path)) as Record<string, unknown>;
    const loaded = {
      parse: load('parser/index.js').default,
      visitQuery: load('core/visitors/query.js').default,
      Stack: load('utils/stack.js').Stack,
      count: load('core/functions/count.js').default,
      length: load('core/functions/length.js').default,
      value: load('core/functions/value.js').default,
    };
    if (typeof loaded.parse !== 'function' || typeof loaded.visitQuery !== 'function') return null;
    if (typeof loaded.Stack !== 'function') return null;
    for (const fn of [loaded.count, loaded.length, loaded.value]) {
      if (typeof (fn as FunctionDeclaration | undefined)?.declaration !== 'function') return null;
    }
    return loaded as Evaluator;
  } catch {
    return null;
  }
})();

/**
 * An I-Regexp (RFC 9485) in RE2 syntax (RFC 9485 section 5.4): a `.` outside a character class
 * matches any character but \n and \r. The anchoring is left to the caller (whole text for
 * match(), anywhere for search()).
 */
export function iRegexpToRe2(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
    } else if (ch === '[') {
      inClass = true;
      out += ch;
      // As RE2 reads a class: `^` negates, and a `]` first in it is a literal.
      if (pattern[i + 1] === '^') out += pattern[++i];
      if (pattern[i + 1] === ']') out += pattern[++i];
    } else if (ch === '.') {
      out += '[^\\n\\r]';
    } else {
      out += ch;
    }
  }
  return out;
}

/**
 * An upper bound of the RE2 instructions `pattern` compiles to, found without compiling it:
 * counted repetitions multiply what they repeat (`a{1000}` is 1000 instructions in 7
 * characters), so a short pattern can take RE2 long to compile.
 */
export function patternSizeBound(pattern: string): number {
  let i = 0;
  const sequence = (): number => {
    let total = 0;
    let last = 0;
    while (i < pattern.length && pattern[i] !== ')') {
      const ch = pattern[i++];
      if (ch === '(') {
        const inner = sequence();
        i++;
        total += last;
        last = inner + 2;
      } else if (ch === '{') {
        const counted = /^(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
        if (counted === null) {
          total += last;
          last = 1;
          continue;
        }
        i += counted[0].length;
        const times = Math.max(
          Number(counted[3] || counted[1]),
          counted[2] === ',' ? Number(counted[1]) + 1 : 1,
        );
        last *= Math.max(times, 1);
      } else if (ch === '*' || ch === '+' || ch === '?') {
        last += 1;
      } else if (ch === '|') {
        total += last + 1;
        last = 0;
      } else {
        if (ch === '\\') {
          if ((pattern[i] === 'p' || pattern[i] === 'P') && pattern[i + 1] === '{') {
            const end = pattern.indexOf('}', i);
            i = end < 0 ? pattern.length : end + 1;
          } else i++;
        } else if (ch === '[') {
          if (pattern[i] === '^') i++;
          if (pattern[i] === ']') i++;
          while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
          i++;
        }
        total += last;
        last = 1;
      }
    }
    return total + last;
  };
  let size = sequence();
  while (i < pattern.length) {
    i++;
    size += sequence();
  }
  return size;
}

/** Size of a compiled pattern, RE2 instructions (its length when re2js does not tell). */
function instructionsOf(regex: RE2JS, pattern: string): number {
  const size = (regex as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst
    ?.length;
  return typeof size === 'number' ? Math.max(size, pattern.length) : pattern.length;
}

/** match() and search() of RFC 9535 (sections 2.4.6, 2.4.7) over RE2, sharing one work budget and compiled patterns. */
function regexFunctions(maxWork: number): { match: FunctionDeclaration; search: FunctionDeclaration } {
  const compiled = new Map<string, RE2JS | null>();
  let work = 0;
  const charge = (units: number) => {
    work += units;
    if (work > maxWork) {
      throw new JsonPathLimitError(
        `match() and search() in this JSONPath need more than ${maxWork} units of regex work (pattern size × text length); the evaluation was stopped`,
      );
    }
  };
  const regexOf = (value: unknown, pattern: unknown): RE2JS | null => {
    if (typeof value !== 'string' || typeof pattern !== 'string') return null;
    let regex = compiled.get(pattern);
    if (regex === undefined) {
      // Compiling costs about 100 units an instruction: charged before, on a bound of its size.
      charge(100 * patternSizeBound(pattern));
      try {
        regex = RE2JS.compile(iRegexpToRe2(pattern));
      } catch {
        // Not a pattern RE2 reads: LogicalFalse, as for an invalid I-Regexp.
        regex = null;
      }
      compiled.set(pattern, regex);
    }
    if (regex !== null) charge((instructionsOf(regex, pattern) + 16) * (value.length + 1));
    return regex;
  };
  const definition = { parameters: ['ValueType', 'ValueType'], returnType: 'LogicalType' };
  return {
    match: {
      declaration: (_ctx, value, pattern) => regexOf(value, pattern)?.matches(value as string) === true,
      definition,
    },
    search: {
      declaration: (_ctx, value, pattern) =>
        regexOf(value, pattern)
          ?.matcher(value as string)
          .find() === true,
      definition,
    },
  };
}

/** Whether a parsed JSONPath calls match() or search() anywhere. */
function callsRegexFunction(node: unknown): boolean {
  const stack: unknown[] = [node];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === null || typeof item !== 'object') continue;
    const record = item as Record<string, unknown>;
    if (record.type === 'FunctionExpr' && (record.name === 'match' || record.name === 'search')) return true;
    stack.push(...Object.values(record));
  }
  return false;
}

/** Every value `path` selects in `document` (RFC 9535), with match() and search() in RE2. */
function select(document: JsonValue, path: string, options: JsonPathOptions): unknown[] {
  if (evaluator === null) {
    if (callsRegexFunction(parse(path))) {
      throw new Error('match() and search() are not available in this build of the agent');
    }
    return query(document, path);
  }
  const values: unknown[] = [];
  const ctx = {
    cache: new Map(),
    capturePaths: false,
    functions: {
      count: evaluator.count,
      length: evaluator.length,
      value: evaluator.value,
      ...regexFunctions(options.maxRegexWork ?? MAX_JSONPATH_REGEX_WORK),
    },
    regexp: 'i-regexp',
    stack: new evaluator.Stack(),
  };
  evaluator.visitQuery(ctx, document, document, evaluator.parse(path), (value) => {
    values.push(value);
  });
  return values;
}

/**
 * Evaluates a JSONPath (RFC 9535) over `document` and returns every value it selects, in
 * document order. A trailing `.length` (not part of RFC 9535, but what users of the field
 * write) gives the length of each selected array or string; on an object it selects the
 * member named `length` as RFC 9535 would. The filter functions match() (whole string) and
 * search() (substring) evaluate their I-Regexp in RE2, so no pattern or value can make them
 * backtrack; their work is bounded by `options.maxRegexWork`.
 * @throws JsonPathLimitError past that bound; Error with the parser's message when `path` is not a valid JSONPath.
 */
export function queryJsonPath(document: unknown, path: string, options: JsonPathOptions = {}): unknown[] {
  const json = document as JsonValue;
  if (!path.endsWith(LENGTH_SUFFIX)) return select(json, path, options);
  const parents = select(json, path.slice(0, -LENGTH_SUFFIX.length), options);
  const values: unknown[] = [];
  for (const parent of parents) {
    if (Array.isArray(parent) || typeof parent === 'string') values.push(parent.length);
    else if (typeof parent === 'object' && parent !== null && Object.hasOwn(parent, 'length')) {
      values.push((parent as Record<string, unknown>).length);
    }
  }
  return values;
}
