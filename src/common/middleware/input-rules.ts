import { notAcceptedProperty, type ErrorDetail } from '../errors/api-exception.js';

/**
 * Deepest nesting of arrays and objects a JSON request body may have (docs/wire.md#request-bodies: nesting deeper
 * than 32 levels is 400): `{}` is depth 1, `{"items":[{}]}` depth 3. Deeper → 400,
 * decided on the raw text before the body is parsed or transformed.
 */
export const MAX_JSON_DEPTH = 32;

/** Query parameter names that would carry a credential (docs/wire.md#query-strings): always refused with 400. */
export const CREDENTIAL_QUERY_PARAMS = ['access_token', 'token', 'api_key', 'apikey', 'key'];

/**
 * Property names refused at any depth of a body (docs/wire.md#request-bodies: prototype-named properties → 400):
 * `prototype` and every member of `Object.prototype` (`__proto__`, `constructor`, `toString`, …),
 * which object mappers silently skip or which would reach an object's prototype.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['prototype', ...Object.getOwnPropertyNames(Object.prototype)]);

/** Most field details one refusal lists; a hostile body could otherwise make the answer as large as itself. */
export const MAX_DETAILS = 20;

/** An unpaired UTF-16 surrogate: in `u` mode a well-formed pair is one code point and does not match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const MAX_SHOWN_NAME = 64;

/**
 * A property name as it may be shown in an error detail: U+0000, other control characters and
 * unpaired surrogates written as `\uXXXX`, cut at 64 characters (with `…`).
 */
export function displayName(name: string): string {
  const cut = name.length > MAX_SHOWN_NAME ? `${name.slice(0, MAX_SHOWN_NAME)}…` : name;
  return cut.replace(/[\u0000-\u001f\u007f]|[\uD800-\uDFFF]/gu, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The path of a member: `name`, `items[0]`, `items[0].sku` (the notation of validation details). */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const shown = displayName(key);
  return parent === '' ? shown : `${parent}.${shown}`;
}

/** What is wrong with one string of a request (a value or a property name); `undefined` when nothing. */
export function textProblem(text: string): 'contains U+0000' | 'contains an unpaired UTF-16 surrogate' | undefined {
  if (text.includes('\u0000')) return 'contains U+0000';
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate';
  return undefined;
}

/**
 * The nesting depth of a JSON text, counting `[` and `{` outside strings, without parsing it
 * (one pass, no recursion, so any text is safe). Stops counting once `limit` is passed and returns
 * `limit + 1`. Malformed text gets some number; JSON.parse refuses it afterwards.
 */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return limit + 1;
      }
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return deepest;
}

/**
 * The text rules of docs/wire.md#request-bodies over a parsed body (JSON or form): every string value and
 * property name, at any depth, must not contain U+0000 or an unpaired surrogate, and no property
 * may be named as in {@link FORBIDDEN_KEYS}. Walks with an explicit stack (no recursion), so the
 * depth of `value` does not matter. Returns at most {@link MAX_DETAILS} details, `field` being the
 * member's path (`items[0].sku`; `body` for a top-level string); `[]` when the body is clean.
 */
export function bodyProblems(value: unknown): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  // an entry is a value to inspect, or a problem found on a property name (kept in document order)
  type Entry = { path: string; value: unknown; problem?: undefined } | { problem: ErrorDetail };
  const stack: Entry[] = [{ path: '', value }];
  while (stack.length > 0 && problems.length < MAX_DETAILS) {
    const entry = stack.pop()!;
    if (entry.problem) {
      problems.push(entry.problem);
      continue;
    }
    const { path, value: current } = entry;
    if (typeof current === 'string') {
      const problem = textProblem(current);
      if (problem) problems.push({ field: path || 'body', message: `${path || 'body'} ${problem}` });
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    const children: Entry[] = [];
    if (Array.isArray(current)) {
      current.forEach((item, index) => children.push({ path: fieldPath(path, index), value: item }));
    } else {
      for (const key of Object.keys(current)) {
        const field = fieldPath(path, key);
        const problem = textProblem(key);
        if (problem) children.push({ problem: { field, message: `the property name ${field} ${problem}` } });
        else if (FORBIDDEN_KEYS.has(key)) children.push({ problem: notAcceptedProperty(field) });
        else children.push({ path: field, value: (current as Record<string, unknown>)[key] });
      }
    }
    // reversed onto the stack, so that details come in document order
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return problems.slice(0, MAX_DETAILS);
}

/**
 * The rules for a request's query string (docs/wire.md#query-strings, docs/errors.md#codes), on its raw text (after `?`): a parameter
 * named as a credential ({@link CREDENTIAL_QUERY_PARAMS}) and a name or value containing U+0000
 * are each a detail naming the parameter (the value is never quoted). `[]` when the query is clean.
 */
export function queryProblems(rawQuery: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (problems.length >= MAX_DETAILS) break;
    const field = displayName(name);
    if (seen.has(field)) continue;
    if (CREDENTIAL_QUERY_PARAMS.includes(name)) {
      seen.add(field);
      problems.push({ field, message: `${field} is not accepted in the query string` });
    } else if (name.includes('\u0000') || value.includes('\u0000')) {
      seen.add(field);
      problems.push({ field, message: `query parameter ${field} contains U+0000` });
    }
  }
  return problems;
}

/**
 * The rule for a request's path (docs/errors.md#codes: U+0000 in the path is 400): a segment that decodes to U+0000 (`%00`) → a
 * detail with field `path`. Raw control characters never get this far (Node's HTTP parser
 * refuses them). `undefined` when the path is clean.
 */
export function pathProblem(rawPath: string): ErrorDetail | undefined {
  return /%00/i.test(rawPath) ? { field: 'path', message: 'the path contains U+0000' } : undefined;
}
