import { AsyncLocalStorage } from 'node:async_hooks';
import { type ApiException, preconditionFailed, preconditionRequired } from '../errors/api-exception.js';
import { linkPrefix } from '../versioning/api-versions.js';

/**
 * Conditional requests (RFC 9110 §8.8.3, §13): entity tags of single resources and the `If-Match`
 * precondition of their writes.
 *
 * Every resource row carries a `version` column (`@VersionColumn`, 1 on insert, incremented by
 * every UPDATE TypeORM's query builder writes, and by the cascading bumps of representations that
 * embed other rows — a tag's name in an article, an author's name in v2). The strong entity tag of
 * a representation is that version plus the API version it is served as: `"3.v2"`. The same row
 * served as v1 and as v2 (different representations) has different tags; a `fields` projection
 * does not change it (the tag names the full representation).
 */

/**
 * Symbol under which a resource mapper leaves the response's entity tag (JSON ignores symbols,
 * spreads copy it): computed when the mapper runs, inside the request's served API version.
 */
export const ENTITY_TAG = Symbol('entityTag');

/** What the request said about its precondition: the parsed `If-Match`, and whether one is required. */
export interface WritePreconditions {
  /** `'*'`, the listed entity tags (quotes included, `W/` kept), or undefined without `If-Match`. */
  ifMatch?: '*' | string[];
  /** REQUIRE_IF_MATCH: a PUT/PATCH/DELETE of a resource without `If-Match` → 428. */
  required: boolean;
}

const current = new AsyncLocalStorage<WritePreconditions>();

/**
 * The entity tags of an `If-Match` / `If-None-Match` field value (RFC 9110 §8.8.3, §13.1.1):
 * `'*'`, or the comma-separated list of tags (`"a"`, `W/"b"`), undefined when the header is absent.
 * An unparsable member is kept as written: it matches nothing.
 */
export function parseEntityTags(value: string | string[] | undefined): '*' | string[] | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  if (text.trim() === '*') return '*';
  const tags = text.match(/(?:W\/)?"[^"]*"|[^,\s]+/g) ?? [];
  return tags;
}

/**
 * Runs `handle` (and everything it awaits) with the request's write preconditions, so that the
 * services' conditional writes ({@link versionCondition}) see them. ResourceInterceptor does this for PUT, PATCH and DELETE.
 */
export function withPreconditions<T>(preconditions: WritePreconditions, handle: () => T): T {
  return current.run(preconditions, handle);
}

/** The strong entity tag of row `version` served as the current API version: `"3.v2"` (see the module comment). */
export function entityTag(version: number): string {
  return `"${version}.${linkPrefix().slice(1)}"`;
}

/**
 * Gives a resource response the entity tag of row `version` served as the current API version
 * (see {@link ENTITY_TAG}); ResourceInterceptor sends it as `ETag`. Returns `response`. A row
 * without `version` (a list's narrowed select) leaves the response untagged.
 */
export function tagged<T extends object>(response: T, version: unknown): T {
  if (version !== undefined && version !== null) Object.defineProperty(response, ENTITY_TAG, { value: entityTag(Number(version)), enumerable: true });
  return response;
}

/** The entity tag of a response {@link tagged} by its mapper, else undefined. */
export function responseTag(response: unknown): string | undefined {
  return response && typeof response === 'object' ? (response as { [ENTITY_TAG]?: string })[ENTITY_TAG] : undefined;
}

/**
 * Evaluates the request's `If-Match` against the loaded row (RFC 9110 §13.1.1, strong comparison;
 * §13.2.2: after authentication, authorization and existence, which the caller has checked by
 * loading it) and returns the extra condition of the one conditional UPDATE/DELETE that follows:
 * `{version}` when a tag matched — the write then changes the row only if nobody wrote it
 * meanwhile, so of two writes sent with the same `If-Match` exactly one succeeds — and `{}`
 * without `If-Match` or with `If-Match: *` (the row exists: it was just loaded).
 * Outside a request (services called directly) there is no precondition: `{}`.
 * @throws 428 `precondition_required` when REQUIRE_IF_MATCH is on and no `If-Match` came;
 *   412 `precondition_failed` when no listed tag is the row's current one.
 */
export function versionCondition(resource: string, id: number, version: number): { version?: number } {
  const preconditions = current.getStore();
  if (!preconditions) return {};
  const { ifMatch, required } = preconditions;
  if (ifMatch === undefined) {
    if (required) throw preconditionRequired();
    return {};
  }
  if (ifMatch === '*') return {};
  if (!ifMatch.includes(entityTag(version))) throw preconditionFailed(resource, id);
  return { version };
}

/**
 * What a conditional write that changed no row means: 412 when it was conditional on the version
 * (the row changed or went since it was loaded — the client's tag no longer names it), else `orElse()`.
 */
export function noRowWritten(condition: { version?: number }, resource: string, id: number, orElse: () => ApiException): ApiException {
  return condition.version !== undefined ? preconditionFailed(resource, id) : orElse();
}
