import { describe, expect, it } from '@jest/globals';
import { ConfigError } from './config-error.js';
import { invalid, readSchema, type Schema } from './env-schema.js';

interface Sample {
  MODE: 'fast' | 'slow';
  LEVEL: string;
  COUNT: number;
  LIMIT?: number;
  FLAG: boolean;
  AT: Date;
  NAME?: string;
  TOKEN?: string;
  LIST: number[];
  DERIVED: boolean;
}

const SAMPLE: Schema<Sample> = {
  MODE: { type: 'text', values: ['fast', 'slow'], caseInsensitive: true, rule: 'fast or slow', echo: true, default: 'fast', meaning: 'a mode' },
  LEVEL: { type: 'text', default: (env) => (env.MODE === 'slow' ? 'quiet' : 'loud'), meaning: 'computed from MODE' },
  COUNT: { type: 'int', min: 1, max: 10, default: 5, meaning: 'a count' },
  LIMIT: { type: 'int', min: 0, max: 99, meaning: 'optional' },
  FLAG: { type: 'bool', default: false, meaning: 'a flag' },
  AT: { type: 'date', default: '2026-12-01', meaning: 'a date' },
  NAME: { type: 'text', caseInsensitive: true, valid: /^[a-z]+$/, output: (name) => `<${name}>`, rule: 'letters', echo: true, meaning: 'a name' },
  TOKEN: { type: 'text', valid: (token) => token.length >= 4, rule: 'at least 4 characters', meaning: 'a secret' },
  LIST: {
    type: 'custom',
    parse: (text, key) => (/^\d+(,\d+)*$/.test(text) ? text.split(',').map(Number) : invalid(key, 'numbers', text)),
    default: () => [1, 2],
    meaning: 'a list',
  },
  DERIVED: { type: 'derived', from: (raw) => raw.OTHER === 'on', meaning: 'from OTHER' },
};

/** Reads SAMPLE and returns the message of the ConfigError it throws; fails the test when it throws nothing. */
function message(raw: Record<string, unknown>): string {
  try {
    readSchema(SAMPLE, raw);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(raw)}`);
}

describe('readSchema', () => {
  it('fills the defaults, in the schema order, for an empty environment', () => {
    const env = readSchema(SAMPLE, {});
    expect(env).toEqual({
      MODE: 'fast',
      LEVEL: 'loud',
      COUNT: 5,
      LIMIT: undefined,
      FLAG: false,
      AT: new Date('2026-12-01T00:00:00.000Z'),
      NAME: undefined,
      TOKEN: undefined,
      LIST: [1, 2],
      DERIVED: false,
    });
    expect(Object.keys(env)).toEqual(Object.keys(SAMPLE));
  });

  it('treats empty as unset and ignores variables the schema does not name', () => {
    expect(readSchema(SAMPLE, { MODE: '', COUNT: '', LIST: '', OTHER_VARIABLE: 'x' })).toMatchObject({ MODE: 'fast', COUNT: 5, LIST: [1, 2] });
    expect(readSchema(SAMPLE, { OTHER_VARIABLE: 'x' })).not.toHaveProperty('OTHER_VARIABLE');
  });

  it('reads set values: trimmed and lower-cased where asked, numbers given as numbers, outputs and derived values', () => {
    expect(
      readSchema(SAMPLE, { MODE: ' SLOW ', COUNT: 7, LIMIT: ' 0 ', FLAG: 'True', AT: '2027-01-02T03:04:05+01:00', NAME: ' Ann ', LIST: '3,4', OTHER: 'on' }),
    ).toEqual({
      MODE: 'slow',
      LEVEL: 'quiet',
      COUNT: 7,
      LIMIT: 0,
      FLAG: true,
      AT: new Date('2027-01-02T02:04:05.000Z'),
      NAME: '<ann>',
      TOKEN: undefined,
      LIST: [3, 4],
      DERIVED: true,
    });
  });

  it('hands out a fresh computed default each time', () => {
    const first = readSchema(SAMPLE, {});
    first.LIST.push(3);
    expect(readSchema(SAMPLE, {}).LIST).toEqual([1, 2]);
  });

  it.each([
    [{ MODE: 'medium' }, 'Invalid configuration: MODE must be fast or slow (got "medium")'],
    [{ COUNT: '11' }, 'Invalid configuration: COUNT must be an integer from 1 to 10 (got "11")'],
    [{ COUNT: ' 1.5 ' }, 'Invalid configuration: COUNT must be an integer from 1 to 10 (got "1.5")'],
    [{ LIMIT: '-1' }, 'Invalid configuration: LIMIT must be an integer from 0 to 99 (got "-1")'],
    [{ FLAG: 'yes' }, 'Invalid configuration: FLAG must be true or false (got "yes")'],
    [{ AT: '2026-02-30' }, 'Invalid configuration: AT must be an ISO 8601 date or date-time, e.g. 2026-12-01 or 2026-12-01T00:00:00Z (got "2026-02-30")'],
    [{ NAME: 'Ann\nLee' }, 'Invalid configuration: NAME must be letters (got "ann\\nlee")'],
    [{ TOKEN: 'abc' }, 'Invalid configuration: TOKEN must be at least 4 characters'],
    [{ LIST: '1,,2' }, 'Invalid configuration: LIST must be numbers (got "1,,2")'],
  ])('refuses %j with one line naming the variable', (raw, expected) => {
    expect(message(raw)).toBe(expected);
  });

  it('stops at the first refused variable in the schema order', () => {
    expect(message({ LIST: 'x', COUNT: '0', MODE: 'x' })).toMatch(/^Invalid configuration: MODE /);
  });
});
