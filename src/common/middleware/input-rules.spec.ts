import { describe, expect, it } from '@jest/globals';
import { bodyProblems, displayName, fieldPath, jsonDepth, MAX_DETAILS, MAX_JSON_DEPTH, pathProblem, queryProblems, textProblem } from './input-rules.js';

describe('jsonDepth', () => {
  it.each([
    ['1', 0],
    ['{}', 1],
    ['[]', 1],
    ['{"a":[{"b":1}]}', 3],
    ['[[],[[]]]', 3],
  ])('counts %s as %i', (text, depth) => {
    expect(jsonDepth(text)).toBe(depth);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepth('{"a":"[[[{{{","b":"\\"[[[","c":[]}')).toBe(2);
    expect(jsonDepth('["\\\\", []]')).toBe(2);
  });

  it('stops at limit + 1 on huge nesting, without recursion', () => {
    expect(jsonDepth('['.repeat(1_000_000))).toBe(MAX_JSON_DEPTH + 1);
    expect(jsonDepth(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBe(MAX_JSON_DEPTH);
    expect(jsonDepth('[[[', 2)).toBe(3);
  });
});

describe('textProblem', () => {
  it('finds U+0000 and unpaired surrogates, accepts pairs', () => {
    expect(textProblem('a\u0000')).toBe('contains U+0000');
    expect(textProblem('\ud800')).toBe('contains an unpaired UTF-16 surrogate');
    expect(textProblem('x\udfffy')).toBe('contains an unpaired UTF-16 surrogate');
    expect(textProblem('\ud83d\ude00 ok é')).toBeUndefined();
  });
});

describe('displayName and fieldPath', () => {
  it('escapes control characters and surrogates and cuts long names', () => {
    expect(displayName('a\u0000b\ud800')).toBe('a\\u0000b\\ud800');
    expect(displayName('x'.repeat(100))).toBe(`${'x'.repeat(64)}…`);
  });

  it('writes the validation-detail notation', () => {
    expect(fieldPath('', 'items')).toBe('items');
    expect(fieldPath('items', 0)).toBe('items[0]');
    expect(fieldPath('items[0]', 'sku')).toBe('items[0].sku');
  });
});

describe('bodyProblems', () => {
  it('is empty for a clean body', () => {
    expect(bodyProblems({ title: 'x', items: [{ sku: 'a', n: 1 }, null, true], meta: {} })).toEqual([]);
  });

  it('names every offending value, key and prototype name with its path, in document order', () => {
    const body = JSON.parse('{"a":"\\u0000","b":[{"c":"\\ud800"}],"d":{"__proto__":1,"constructor":2,"prototype":3,"toString":4},"e\\u0000":1}') as object;
    expect(bodyProblems(body).map((p) => p.field)).toEqual(['a', 'b[0].c', 'd.__proto__', 'd.constructor', 'd.prototype', 'd.toString', 'e\\u0000']);
    expect(bodyProblems(body)[2].message).toBe('d.__proto__ is not an accepted property');
  });

  it('walks bodies of any depth without recursion, and lists at most MAX_DETAILS', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(bodyProblems(deep)).toEqual([{ field: expect.stringMatching(/^\[0\]+/), message: expect.stringContaining('U+0000') }]);
    expect(bodyProblems(Array.from({ length: 100 }, () => '\u0000'))).toHaveLength(MAX_DETAILS);
  });
});

describe('queryProblems and pathProblem', () => {
  it('names credential parameters and parameters holding U+0000, once each', () => {
    expect(queryProblems('status=done&sort=-title')).toEqual([]);
    expect(queryProblems('access_token=s&token=t&token=u').map((p) => p.field)).toEqual(['access_token', 'token']);
    expect(queryProblems('a=%00&b%00=1&a=%00')).toEqual([
      { field: 'a', message: 'query parameter a contains U+0000' },
      { field: 'b\\u0000', message: 'query parameter b\\u0000 contains U+0000' },
    ]);
    expect(JSON.stringify(queryProblems('key=secret-value'))).not.toContain('secret-value');
  });

  it('finds %00 in a path', () => {
    expect(pathProblem('/v1/todos/%00')).toEqual({ field: 'path', message: 'the path contains U+0000' });
    expect(pathProblem('/v1/todos/1%2500')).toBeUndefined();
    expect(pathProblem('/v1/todos/100')).toBeUndefined();
  });
});
