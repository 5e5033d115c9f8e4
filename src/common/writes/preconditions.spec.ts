import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../../test/setup/refusal.js';
import { serveAsVersion } from '../versioning/api-versions.js';
import { entityTag, noRowWritten, parseEntityTags, responseTag, tagged, versionCondition, withPreconditions } from './preconditions.js';
import { notFound } from '../errors/api-exception.js';

describe('parseEntityTags', () => {
  it('reads *, one tag, lists, weak tags; undefined without the header', () => {
    expect(parseEntityTags(undefined)).toBeUndefined();
    expect(parseEntityTags(' * ')).toBe('*');
    expect(parseEntityTags('"3.v1"')).toEqual(['"3.v1"']);
    expect(parseEntityTags('"1.v1", W/"2.v1" ,"3.v2"')).toEqual(['"1.v1"', 'W/"2.v1"', '"3.v2"']);
    expect(parseEntityTags(['"1.v1"', '"2.v1"'])).toEqual(['"1.v1"', '"2.v1"']);
    expect(parseEntityTags('garbage')).toEqual(['garbage']);
  });
});

describe('entity tags', () => {
  it('are the row version and the served API version', () => {
    expect(entityTag(3)).toBe('"3.v1"');
    expect(serveAsVersion('2', () => entityTag(3))).toBe('"3.v2"');
  });

  it('travel on the response under a symbol JSON ignores, and survive a spread', () => {
    const response = tagged({ id: 1 }, 4);
    expect(JSON.stringify(response)).toBe('{"id":1}');
    expect(responseTag(response)).toBe('"4.v1"');
    expect(responseTag({ ...response, author: {} })).toBe('"4.v1"');
    expect(responseTag(tagged({ id: 1 }, undefined))).toBeUndefined();
    expect(responseTag(null)).toBeUndefined();
  });
});

describe('versionCondition', () => {
  const run = (ifMatch: '*' | string[] | undefined, required = false) => () => withPreconditions({ ifMatch, required }, () => versionCondition('todo', 7, 3));

  it('adds the version when a listed tag is the current one (strong comparison)', () => {
    expect(run(['"3.v1"'])()).toEqual({ version: 3 });
    expect(run(['"2.v1"', '"3.v1"'])()).toEqual({ version: 3 });
  });

  it('adds nothing without If-Match, with *, or outside a request', () => {
    expect(run(undefined)()).toEqual({});
    expect(run('*', true)()).toEqual({});
    expect(versionCondition('todo', 7, 3)).toEqual({});
  });

  it('refuses a tag that is not the current one with 412 — weak tags and other versions included', () => {
    for (const tags of [['"2.v1"'], ['W/"3.v1"'], ['"3.v2"'], ['garbage']]) {
      expect(refusal(run(tags))).toEqual({ status: 412, code: 'precondition_failed', message: 'todo 7 has changed: If-Match names no current representation; read it again' });
    }
  });

  it('refuses a missing If-Match with 428 when REQUIRE_IF_MATCH is on', () => {
    expect(refusal(run(undefined, true))).toEqual({ status: 428, code: 'precondition_required', message: expect.any(String) });
  });

  it('reads a write that changed no row as 412 when it was conditional, else as the given error', () => {
    expect(noRowWritten({ version: 3 }, 'todo', 7, () => notFound('todo', 7)).getStatus()).toBe(412);
    expect(noRowWritten({}, 'todo', 7, () => notFound('todo', 7)).getStatus()).toBe(404);
  });
});
