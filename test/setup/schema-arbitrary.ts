import fc from 'fast-check';

/**
 * OpenAPI 3.0 schema → fast-check arbitraries, for the property-based fuzz suite
 * (test/fuzz.e2e-spec.ts).
 *
 * - {@link validValue}: values a schema accepts — `type`, `enum`, `format` (date-time, email, uri,
 *   uri-reference, password), `minLength`/`maxLength`, `minimum`/`maximum`, `pattern`,
 *   `minItems`/`maxItems`/`uniqueItems`, required and optional properties, `nullable`, local
 *   `$ref`, `allOf` (merged), `oneOf`/`anyOf` (one branch). Strings never contain U+0000 (docs/errors.md#codes:
 *   refused everywhere).
 * - {@link hostileValue}: values that break the schema — wrong JSON types, missing required and
 *   extra (`__proto__`, `constructor`, mass-assignment) properties, NUL, lone surrogates, strings
 *   over `maxLength` and of ~100 KiB, deep nesting, extreme numbers as raw JSON number text
 *   (`1e308`, `-0`, `2**53+1`, `1e999`) and numbers-as-strings (`"NaN"`), values outside an `enum`.
 *
 * A generated value is plain JSON data except for {@link RawJson} nodes (JSON text written as is,
 * for numbers `JSON.stringify` cannot express) and own `__proto__` properties; write it with
 * {@link toJsonText}.
 */

/** An OpenAPI schema object (or a `$ref` to one). */
export type Schema = Record<string, any>;

/** Hooks of a conversion: `$ref` resolution and per-property replacements. */
export interface SchemaContext {
  /** Follows a local `#/components/...` `$ref` of the document (returns non-`$ref` schemas as they are). */
  resolve: (schema: Schema) => Schema;
  /**
   * A replacement arbitrary for the valid values of a named property (e.g. names of tags that
   * exist), or undefined to derive it from the schema.
   */
  hint?: (property: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;
}

/** JSON text inserted verbatim by {@link toJsonText} (`-0`, `1e999`, `9007199254740993`, deep nesting). */
export class RawJson {
  constructor(readonly text: string) {}
  /** The value a JSON parser reads from the text (for comparisons after a write). */
  parsed(): unknown {
    return JSON.parse(this.text);
  }
}

/** Serialises a generated value: {@link RawJson} nodes verbatim, own `__proto__` keys kept, lone surrogates as `\uXXXX`. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((item) => toJsonText(item)).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${toJsonText(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The value a server reads from a generated one (RawJson parsed). */
export function asParsed(value: unknown): unknown {
  return JSON.parse(toJsonText(value));
}

/** Sets an own enumerable property, also for `__proto__` (a plain assignment would change the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The effective schema: `$ref` followed, single-branch `allOf` unwrapped, several `allOf` branches merged. */
export function flatten(schema: Schema, ctx: SchemaContext): Schema {
  let current = ctx.resolve(schema);
  if (Array.isArray(current.allOf)) {
    const parts = (current.allOf as Schema[]).map((part) => flatten(part, ctx));
    const { allOf: _allOf, ...rest } = current;
    current = parts.reduce<Schema>(
      (merged, part) => ({
        ...part,
        ...merged,
        properties: { ...(part.properties ?? {}), ...(merged.properties ?? {}) },
        required: [...new Set([...((part.required as string[]) ?? []), ...((merged.required as string[]) ?? [])])],
      }),
      rest,
    );
    if (Object.keys(current.properties as Schema).length === 0) delete current.properties;
    if ((current.required as string[]).length === 0) delete current.required;
  }
  return current;
}

const INT32 = { min: -2147483648, max: 2147483647 };
const DAY_MS = 24 * 3600 * 1000;

/** One code point of a valid string: mostly printable, sometimes any Unicode scalar value except U+0000. */
const validChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\u0000') },
);

/** Number of code points, as JSON Schema counts `minLength`/`maxLength`. */
export const codePoints = (text: string) => [...text].length;

/**
 * Strings matching an ECMA `pattern`. fast-check cannot generate from lookaheads: they are removed
 * for generation (the sort grammar's "no field twice", e.g.) and the full pattern filters the draws.
 */
function matching(pattern: string): fc.Arbitrary<string> {
  const full = new RegExp(pattern, 'u');
  const lookahead = /\(\?[=!]/;
  if (!lookahead.test(pattern)) return fc.stringMatching(new RegExp(pattern));
  let generating = pattern;
  for (let start = generating.search(lookahead); start >= 0; start = generating.search(lookahead)) {
    let depth = 0;
    let end = start;
    for (; end < generating.length; end += 1) {
      if (generating[end] === '\\') end += 1;
      else if (generating[end] === '(') depth += 1;
      else if (generating[end] === ')' && --depth === 0) break;
    }
    generating = generating.slice(0, start) + generating.slice(end + 1);
  }
  return fc.stringMatching(new RegExp(generating)).filter((text) => full.test(text));
}

/** Valid strings of a schema (`format`, `pattern`, length bounds). */
function validString(schema: Schema): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = schema.maxLength as number | undefined;
  const fits = (text: string) => codePoints(text) >= minLength && (maxLength === undefined || codePoints(text) <= maxLength) && !text.includes('\u0000');
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as string[]));
  switch (schema.format) {
    case 'date-time':
      return fc.date({ min: new Date(Date.now() + DAY_MS), max: new Date('2099-12-31T00:00:00.000Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'email':
      return fc.emailAddress({ size: 'small' }).filter(fits);
    case 'uri':
      return fc.webUrl({ validSchemes: ['https'], size: 'small' }).filter(fits);
    case 'uri-reference':
      return fc
        .webPath({ size: 'small' })
        .map((p) => `/${p.replace(/^\//, '')}`)
        .filter(fits);
    default:
      break;
  }
  if (typeof schema.pattern === 'string') return matching(schema.pattern as string).filter(fits);
  const cap = Math.min(maxLength ?? 64, Math.max(minLength, 64));
  const arbitraries: fc.Arbitrary<string>[] = [fc.string({ unit: validChar, minLength, maxLength: cap })];
  // the boundary itself: exactly maxLength code points
  if (maxLength !== undefined && maxLength > cap) arbitraries.push(fc.constantFrom('x'.repeat(maxLength), 'é'.repeat(maxLength)));
  return fc.oneof(...arbitraries);
}

/** Valid integers/numbers: the schema's bounds, int32 when `format: int32` or no bound is given. */
function validNumber(schema: Schema): fc.Arbitrary<number> {
  const min = (schema.minimum as number | undefined) ?? (schema.format === 'int64' ? Number.MIN_SAFE_INTEGER : INT32.min);
  const max = (schema.maximum as number | undefined) ?? (schema.format === 'int64' ? Number.MAX_SAFE_INTEGER : INT32.max);
  if (schema.type === 'integer') return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/**
 * Arbitrary of values `schema` accepts. `property` is the property name the value is for (passed
 * to `ctx.hint`). `depth` bounds recursion through `$ref` cycles.
 */
export function validValue(schema: Schema, ctx: SchemaContext, property?: string, depth = 0): fc.Arbitrary<unknown> {
  const flat = flatten(schema, ctx);
  const hinted = property !== undefined ? ctx.hint?.(property, flat) : undefined;
  const base = hinted ?? validNonNull(flat, ctx, depth);
  return flat.nullable === true ? fc.option(base, { nil: null, freq: 4 }) : base;
}

function validNonNull(schema: Schema, ctx: SchemaContext, depth: number): fc.Arbitrary<unknown> {
  const branches = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (branches) return fc.oneof(...branches.map((branch) => validValue(branch, ctx, undefined, depth + 1)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const type = schema.type ?? (schema.properties ? 'object' : schema.items ? 'array' : undefined);
  switch (type) {
    case 'string':
      return validString(schema);
    case 'integer':
    case 'number':
      return validNumber(schema);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const items = validValue((schema.items as Schema | undefined) ?? {}, ctx, undefined, depth + 1);
      const constraints = { minLength: (schema.minItems as number | undefined) ?? 0, maxLength: Math.min((schema.maxItems as number | undefined) ?? 4, 4) };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (item) => JSON.stringify(item) }) : fc.array(items, constraints);
    }
    case 'object':
      return validObject(schema, ctx, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validObject(schema: Schema, ctx: SchemaContext, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required as string[] | undefined) ?? [];
  const writable = Object.entries(properties).filter(([, property]) => ctx.resolve(property).readOnly !== true);
  if (writable.length === 0 && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), validValue(schema.additionalProperties as Schema, ctx, undefined, depth + 1), {
      maxKeys: 3,
    });
  }
  const model = Object.fromEntries(writable.map(([name, property]) => [name, validValue(property, ctx, name, depth + 1)]));
  return fc.record(model, { requiredKeys: required.filter((name) => name in model) }) as fc.Arbitrary<Record<string, unknown>>;
}

/** Strings that no schema of this API accepts in a text field, or that stress a parser. */
export const HOSTILE_STRINGS: readonly string[] = [
  'a\u0000b',
  '\u0000',
  '\ud800',
  'x\udc00y',
  '\udbff\udbff',
  'x'.repeat(102_400),
  'é'.repeat(60_000),
  "' OR 1=1--",
  'id;drop table users',
  '__proto__',
  'constructor',
  '\u202e\u200b\ufeff',
  '%00',
  '',
  ' ',
];

/** Raw JSON numbers at the edges of what parsers and databases hold. */
export const EXTREME_NUMBERS: readonly RawJson[] = [
  '1e308',
  '-1e308',
  '-0',
  '9007199254740993',
  '1e999',
  '-1e999',
  '2147483648',
  '-2147483649',
  '0.5',
  '1E-400',
  '1e2',
].map((text) => new RawJson(text));

/** Values of every JSON type, to swap for a property's value. */
const ANY_TYPE: readonly unknown[] = [true, false, 0, 12345, -1, 'text', '', [], [1, 'a'], {}, { a: 1 }, null, 'NaN', 'Infinity', '1e308', 'true'];

/** Names a client must never be able to set, or that abuse object prototypes. */
export const EXTRA_KEYS: readonly string[] = [
  '__proto__',
  'constructor',
  'prototype',
  'role',
  'is_admin',
  'owner',
  'user',
  'author',
  'password_hash',
  'token_hash',
  'id',
  'unknown_field',
];

/** `depth` nested arrays or objects as raw JSON. */
export function deepNesting(depth: number, kind: 'array' | 'object'): RawJson {
  return new RawJson(kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
}

function matchesType(schema: Schema, value: unknown): boolean {
  if (value === null) return schema.nullable === true;
  switch (schema.type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && !Array.isArray(value);
    default:
      return false;
  }
}

/** Values that break one scalar/array schema (never valid for it, as far as the keywords go). */
function breakingLeaf(schema: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const flat = flatten(schema, ctx);
  const options: fc.Arbitrary<unknown>[] = [fc.constantFrom(...ANY_TYPE.filter((value) => !matchesType(flat, value)))];
  options.push(fc.constantFrom(deepNesting(64, 'array'), deepNesting(2_000, 'object'), deepNesting(10_000, 'array')));
  if (flat.type === 'string') {
    options.push(fc.constantFrom(...HOSTILE_STRINGS));
    if (typeof flat.maxLength === 'number') options.push(fc.constant('y'.repeat((flat.maxLength as number) + 1)));
    if (Array.isArray(flat.enum))
      options.push(fc.constantFrom('finished', `${String(flat.enum[0]).toUpperCase()}`, ` ${String(flat.enum[0])}`, `${String(flat.enum[0])}\u0000`));
  }
  if (flat.type === 'integer' || flat.type === 'number') {
    options.push(fc.constantFrom(...EXTREME_NUMBERS));
    if (typeof flat.minimum === 'number') options.push(fc.constant((flat.minimum as number) - 1));
    if (typeof flat.maximum === 'number') options.push(fc.constant((flat.maximum as number) + 1));
    options.push(fc.constantFrom('1', 'NaN', '-0', '9007199254740993'));
  }
  if (flat.type === 'array') {
    if (typeof flat.minItems === 'number' && flat.minItems > 0) options.push(fc.constant([]));
    if (typeof flat.maxItems === 'number')
      options.push(validValue(flat.items ?? {}, ctx).map((item) => Array.from({ length: (flat.maxItems as number) + 1 }, () => item)));
    options.push(fc.constantFrom([null], [{}], [[]], ['\u0000'], ['\ud800']));
  }
  return fc.oneof(...options);
}

/**
 * Arbitrary of values that break `schema` (an object schema of a request body, or any other):
 * a valid value with one mutation — a property of the wrong type, hostile text, an extreme
 * number, a required property missing, an extra property, deep nesting — applied at the top level
 * or inside a nested object (array items included), or a body that is not an object at all.
 */
export function hostileValue(schema: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const flat = flatten(schema, ctx);
  const notAnObject = fc.constantFrom<unknown>(
    new RawJson('[]'),
    new RawJson('"text"'),
    new RawJson('null'),
    new RawJson('1e308'),
    new RawJson('-0'),
    new RawJson('true'),
    deepNesting(10_000, 'array'),
    deepNesting(5_000, 'object'),
  );
  if (flat.type !== 'object' && !flat.properties) return fc.oneof(breakingLeaf(flat, ctx), notAnObject);
  return fc.oneof({ weight: 8, arbitrary: mutatedObject(flat, ctx, 0) }, { weight: 1, arbitrary: notAnObject });
}

/** A valid object with one mutation at this level or (for object-valued or object-array properties) below. */
function mutatedObject(schema: Schema, ctx: SchemaContext, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>).filter(([, property]) => ctx.resolve(property).readOnly !== true);
  const required = (schema.required as string[] | undefined) ?? [];
  const base = validValue(schema, ctx) as fc.Arbitrary<Record<string, unknown>>;
  const mutations: fc.Arbitrary<Record<string, unknown>>[] = [];
  // an extra property the operation does not accept (mass assignment, prototype pollution)
  mutations.push(
    fc
      .tuple(
        base,
        fc.constantFrom(...EXTRA_KEYS),
        fc.constantFrom<unknown>({ role: 'admin' }, 'admin', 1, null, JSON.parse('{"__proto__":{"role":"admin"}}'), []),
      )
      .map(([value, key, extra]) => {
        const copy = { ...value };
        setOwn(copy, key, extra);
        return copy;
      }),
  );
  if (required.length > 0) {
    mutations.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([value, key]) => {
        const copy = { ...value };
        delete copy[key];
        return copy;
      }),
    );
  }
  for (const [name, property] of properties) {
    const flat = flatten(property, ctx);
    mutations.push(fc.tuple(base, breakingLeaf(flat, ctx)).map(([value, broken]) => ({ ...value, [name]: broken })));
    if (depth < 2 && (flat.type === 'object' || flat.properties)) {
      mutations.push(fc.tuple(base, mutatedObject(flat, ctx, depth + 1)).map(([value, inner]) => ({ ...value, [name]: inner })));
    }
    const items = flat.type === 'array' && flat.items ? flatten(flat.items as Schema, ctx) : undefined;
    if (depth < 2 && items && (items.type === 'object' || items.properties)) {
      mutations.push(fc.tuple(base, mutatedObject(items, ctx, depth + 1)).map(([value, inner]) => ({ ...value, [name]: [inner] })));
    }
  }
  return fc.oneof(...mutations);
}
