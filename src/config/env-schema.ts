import { ConfigError } from './config-error.js';

/**
 * A default: the value itself, or computed from the other variables once they are read (for
 * example LOG_LEVEL from NODE_ENV); a computed default may not read another computed one.
 */
type Default<T, E> = T | ((env: E) => T);

/** `true` or `false`, trimmed, any case. */
interface BoolSpec<E> {
  type: 'bool';
  default: Default<boolean, E>;
}

/** A whole number from `min` to `max`, trimmed (no sign, no decimals, no exponent); without a default, unset is undefined. */
type IntSpec<T, E> = { type: 'int'; min: number; max: number } & (undefined extends T ? { default?: undefined } : { default: Default<number, E> });

/** An ISO 8601 date (midnight UTC) or date-time with `Z` or an offset, trimmed; the default is written the same way. */
interface DateSpec {
  type: 'date';
  default: string;
}

/**
 * A string, optionally one of `values` and/or passing `valid`; without a default, unset is
 * undefined. The message of a refused value is `<KEY> must be <rule>`, followed by
 * ` (got "<value>")` only with `echo` (never for a value that may hold a secret).
 */
type TextSpec<T, E> = {
  type: 'text';
  /** Trim and lower-case the value before it is checked (the result keeps that form). */
  caseInsensitive?: true;
  /** A pattern or a test the (trimmed and lower-cased, with `caseInsensitive`) value must pass. */
  valid?: RegExp | ((value: string) => boolean);
  /** The accepted value turned into the configured one (e.g. `\n` escapes undone). */
  output?: (value: string) => string;
  /** What the value must be, in words, for the message of a refused one. */
  rule?: string;
  /** Quote the refused value in the message (only where it cannot be a secret). */
  echo?: true;
} & (string extends T ? { values?: readonly string[] } : { values: readonly Exclude<T, undefined>[] }) &
  (undefined extends T ? { default?: Default<T, E> } : { default: Default<T, E> });

/** Anything else: `parse` turns the set value into the configured one or throws a {@link ConfigError} naming `key`. */
interface CustomSpec<T, E> {
  type: 'custom';
  default: Default<T, E>;
  parse: (text: string, key: string) => T;
}

/** Not a variable of its own: the value is computed from other variables of the environment (e.g. the `OTEL_*` ones). */
interface DerivedSpec<T> {
  type: 'derived';
  from: (raw: Record<string, unknown>) => T;
}

/** How one variable of type `T` is read, by its TypeScript type, with a one-line `meaning` for readers. */
export type Spec<T, E> = { meaning: string } & (
  | DerivedSpec<T>
  | ([T] extends [boolean]
      ? BoolSpec<E>
      : [T] extends [number | undefined]
        ? IntSpec<T, E>
        : [T] extends [Date]
          ? DateSpec
          : [T] extends [string | undefined]
            ? TextSpec<T, E>
            : CustomSpec<T, E>)
);

/** A schema: one {@link Spec} per key of `E`, each key being the environment variable's name. */
export type Schema<E> = { [K in keyof E]-?: Spec<E[K], E> };

/** The loose view of every kind of spec the interpreter below works on. */
type AnySpec = { meaning: string; default?: unknown } & (
  | { type: 'bool' }
  | { type: 'int'; min: number; max: number }
  | { type: 'date'; default: string }
  | {
      type: 'text';
      caseInsensitive?: true;
      valid?: RegExp | ((value: string) => boolean);
      output?: (value: string) => string;
      rule?: string;
      echo?: true;
      values?: readonly string[];
    }
  | { type: 'custom'; parse: (text: string, key: string) => unknown }
  | { type: 'derived'; from: (raw: Record<string, unknown>) => unknown }
);

/**
 * Throws the one-line start-up error of docs/operations.md#configuration: `Invalid configuration:
 * <key> must be <rule>`, with ` (got "<value>")` when `got` is given (JSON-quoted, so a line break
 * stays on the line).
 */
export function invalid(key: string, rule: string, got?: string): never {
  throw new ConfigError(`Invalid configuration: ${key} must be ${rule}${got === undefined ? '' : ` (got ${JSON.stringify(got)})`}`);
}

/** ISO 8601 date (`2026-12-01`, midnight UTC) or date-time with `Z` or an offset. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Reads one set variable (`text`, never empty) by its spec (not a derived one); throws a {@link ConfigError} naming `key` when it breaks the spec. */
function readValue(key: string, spec: Exclude<AnySpec, { type: 'derived' }>, text: string): unknown {
  switch (spec.type) {
    case 'bool': {
      const word = text.trim().toLowerCase();
      if (word !== 'true' && word !== 'false') invalid(key, 'true or false', word);
      return word === 'true';
    }
    case 'int': {
      const digits = text.trim();
      if (!/^\d+$/.test(digits) || Number(digits) < spec.min || Number(digits) > spec.max) invalid(key, `an integer from ${spec.min} to ${spec.max}`, digits);
      return Number(digits);
    }
    case 'date': {
      const written = text.trim();
      const value = new Date(/T/.test(written) ? written : `${written}T00:00:00Z`);
      // the round trip refuses calendar overflows such as 2026-02-30
      if (!ISO_DATE.test(written) || Number.isNaN(value.getTime()) || (!/T/.test(written) && value.toISOString().slice(0, 10) !== written)) {
        invalid(key, 'an ISO 8601 date or date-time, e.g. 2026-12-01 or 2026-12-01T00:00:00Z', written);
      }
      return value;
    }
    case 'text': {
      const value = spec.caseInsensitive ? text.trim().toLowerCase() : text;
      const allowed = spec.values === undefined || spec.values.includes(value);
      const passes = spec.valid === undefined || (typeof spec.valid === 'function' ? spec.valid(value) : spec.valid.test(value));
      if (!allowed || !passes) invalid(key, spec.rule ?? 'valid', spec.echo ? value : undefined);
      return spec.output ? spec.output(value) : value;
    }
    case 'custom':
      return spec.parse(text, key);
  }
}

/**
 * Reads the environment by a schema, variable by variable in the schema's order (a variable that
 * is unset or empty takes its default; a date's default is read like a set value; a derived value
 * is computed from the whole environment; the computed defaults come last). Takes `process.env`-shaped input; returns one value per schema key.
 * @throws ConfigError with the one-line message of {@link invalid} for the first refused value.
 */
export function readSchema<E>(schema: Schema<E>, raw: Record<string, unknown>): E {
  const env: Record<string, unknown> = {};
  const computed: [string, (env: E) => unknown][] = [];
  for (const [key, spec] of Object.entries(schema) as [string, AnySpec][]) {
    const given = raw[key] === undefined || raw[key] === '' ? undefined : String(raw[key]);
    if (spec.type === 'derived') env[key] = spec.from(raw);
    else if (given !== undefined) env[key] = readValue(key, spec, given);
    else if (spec.type === 'date') env[key] = readValue(key, spec, spec.default);
    else if (typeof spec.default === 'function') {
      env[key] = undefined; // keeps the schema's order of keys
      computed.push([key, spec.default as (env: E) => unknown]);
    } else env[key] = spec.default;
  }
  for (const [key, compute] of computed) env[key] = compute(env as E);
  return env as E;
}
