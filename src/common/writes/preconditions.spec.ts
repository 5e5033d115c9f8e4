import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../../test/setup/refusal.js';
import { serveAsVersion } from '../versioning/api-versions.js';
import { entityTag, noRowWritten, notModified, parseEntityTags, Tagged, tagged, versionCondition } from './preconditions.js';
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

  it('travel beside the representation, not on it, and survive a change of shape', () => {
    const answer = tagged({ id: 1 }, 4);
    expect(answer).toBeInstanceOf(Tagged);
    expect(answer.body).toEqual({ id: 1 });
    expect(Object.getOwnPropertySymbols(answer.body)).toEqual([]);
    expect(answer.entityTag).toBe('"4.v1"');
    const v2 = serveAsVersion('2', () => tagged({ id: 1 }, 4).map((body) => ({ ...body, author: {} })));
    expect([v2.body, v2.entityTag]).toEqual([{ id: 1, author: {} }, '"4.v2"']);
    expect(tagged({ id: 1 }, undefined).entityTag).toBeUndefined();
    expect(tagged({ id: 1 }, null).entityTag).toBeUndefined();
  });
});

describe('versionCondition', () => {
  const run =
    (ifMatch: '*' | string[] | undefined, required = false) =>
    () =>
      versionCondition({ ifMatch, required }, 'todo', 7, 3);

  it('adds the version when a listed tag is the current one (strong comparison)', () => {
    expect(run(['"3.v1"'])()).toEqual({ version: 3 });
    expect(run(['"2.v1"', '"3.v1"'])()).toEqual({ version: 3 });
  });

  it('adds nothing without If-Match, with *, or outside a request', () => {
    expect(run(undefined)()).toEqual({});
    expect(run('*', true)()).toEqual({});
    expect(versionCondition(undefined, 'todo', 7, 3)).toEqual({});
  });

  it('refuses a tag that is not the current one with 412 — weak tags and other versions included', () => {
    for (const tags of [['"2.v1"'], ['W/"3.v1"'], ['"3.v2"'], ['garbage']]) {
      expect(refusal(run(tags))).toEqual({
        status: 412,
        code: 'precondition_failed',
        message: 'todo 7 has changed: If-Match names no current representation; read it again',
      });
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

describe('notModified (GET/HEAD → 304)', () => {
  const etag = '"3.v1"';
  const get = (ifNoneMatch?: string, extra: object = {}) => ({ method: 'GET', ifNoneMatch, ...extra });
  const ok = { status: 200, etag };

  it('is true when If-None-Match names the ETag: exact, weak comparison either way, in a list, or *', () => {
    for (const value of [etag, `W/${etag}`, '"0.v1", "3.v1"', ' "0.v1" ,W/"3.v1"', '*']) expect(notModified(get(value), ok)).toBe(true);
    expect(notModified(get('"3.v1"'), { status: 200, etag: 'W/"3.v1"' })).toBe(true);
    expect(notModified({ method: 'HEAD', ifNoneMatch: etag }, ok)).toBe(true);
    expect(notModified(get(), ok)).toBe(false);
  });

  it('is false for another tag, another representation, a malformed value, or a response without ETag (even with *)', () => {
    for (const value of ['"0.v1"', '"3.v2"', '3.v1', '"3.v1', '']) expect(notModified(get(value), ok)).toBe(false);
    expect(notModified(get('*'), { status: 200 })).toBe(false);
    expect(notModified(get(etag), { status: 200 })).toBe(false);
  });

  it('never turns a write or an error into a 304', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(notModified({ method, ifNoneMatch: '*' }, ok)).toBe(false);
    for (const status of [304, 404, 412, 500, 503]) expect(notModified(get('*'), { status, etag })).toBe(false);
  });

  it('evaluates If-Modified-Since only without If-None-Match and with Last-Modified', () => {
    const lastModified = 'Sat, 21 Nov 2026 10:15:00 GMT';
    expect(notModified(get(undefined, { ifModifiedSince: lastModified }), { ...ok, lastModified })).toBe(true);
    expect(notModified(get(undefined, { ifModifiedSince: 'Sat, 21 Nov 2026 10:14:59 GMT' }), { ...ok, lastModified })).toBe(false);
    expect(notModified(get(undefined, { ifModifiedSince: 'not a date' }), { ...ok, lastModified })).toBe(false);
    expect(notModified(get(undefined, { ifModifiedSince: lastModified }), ok)).toBe(false);
    // If-None-Match decides when both are sent (RFC 9110 §13.2.2)
    expect(notModified(get('"0.v1"', { ifModifiedSince: lastModified }), { ...ok, lastModified })).toBe(false);
  });
});
