import { type ApiException, preconditionFailed, preconditionRequired } from '../errors/api-exception.js';
import { linkPrefix } from '../versioning/api-versions.js';

/**
 * Conditional requests (RFC 9110 §8.8.3, §13): entity tags of single resources, the `If-None-Match`
 * of their reads (304, {@link notModified}) and the `If-Match` precondition of their writes.
 *
 * Every resource row carries a `version` column (`@VersionColumn`, 1 on insert, incremented by
 * every UPDATE TypeORM's query builder writes, and by the cascading bumps of representations that
 * embed other rows — a tag's name in an article, an author's name in v2). The strong entity tag of
 * a representation is that version plus the API version it is served as: `"3.v2"`. The same row
 * served as v1 and as v2 (different representations) has different tags; a `fields` projection
 * does not change it (the tag names the full representation).
 */

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

/** What {@link notModified} reads of a request: its method and its two GET preconditions, as received. */
export interface ConditionalRead {
  method: string;
  ifNoneMatch?: string | string[];
  ifModifiedSince?: string | string[];
}

/** What {@link notModified} reads of the response about to be sent: its status and validators. */
export interface ReadValidators {
  status: number;
  etag?: string;
  lastModified?: string;
}

/** An opaque tag without its weakness indicator: `W/"3.v1"` → `"3.v1"` (the weak comparison of RFC 9110 §8.8.3.2). */
function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/**
 * Whether a GET or HEAD is answered 304 Not Modified instead of `response`, the origin server's
 * evaluation of RFC 9110 §13.2.2 (steps 3 and 4) — the rule in docs/writes.md#conditional-requests-etag-if-none-match-if-match:
 * - only a GET or HEAD whose response would be 2xx (an error is never turned into a 304: access
 *   and existence come first, §13.2.1);
 * - `If-None-Match` (§13.1.2): true when `*` or any listed tag matches the response's `ETag` by weak
 *   comparison (`W/"3.v1"` matches `"3.v1"`); a response without `ETag` (lists, actions: no
 *   validator) is never 304;
 * - `If-Modified-Since` (§13.1.3) only without `If-None-Match`, and only for a response with
 *   `Last-Modified` (this service sends none, so in practice it is ignored): true when that is not
 *   later than the date; an invalid date or a list is ignored;
 * - the request's `Cache-Control` and `Pragma` do not matter: `no-cache` is an instruction to
 *   caches (RFC 9111 §5.2.1.4), and browsers and Node's `fetch` add it to every request carrying
 *   `If-None-Match`.
 * Returns true for 304, false to send the response as it is.
 */
export function notModified(request: ConditionalRead, response: ReadValidators): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (response.status < 200 || response.status > 299) return false;
  if (request.ifNoneMatch !== undefined) {
    if (!response.etag) return false;
    const tags = parseEntityTags(request.ifNoneMatch);
    if (tags === '*') return true;
    const current = opaqueTag(response.etag);
    return (tags ?? []).some((tag) => opaqueTag(tag) === current);
  }
  if (request.ifModifiedSince === undefined || Array.isArray(request.ifModifiedSince) || !response.lastModified) return false;
  const since = Date.parse(request.ifModifiedSince);
  const modified = Date.parse(response.lastModified);
  return !Number.isNaN(since) && !Number.isNaN(modified) && modified <= since;
}

/** The strong entity tag of row `version` served as the current API version: `"3.v2"` (see the module comment). */
export function entityTag(version: number): string {
  return `"${version}.${linkPrefix().slice(1)}"`;
}

/**
 * A single resource's representation with the entity tag of the row version it shows — what a
 * service's read or write of one resource returns, and its controller answers:
 * EntityTagInterceptor sends `entityTag` as `ETag` and `body` as the JSON
 * (docs/writes.md#conditional-requests-etag-if-none-match-if-match). `entityTag` is undefined for
 * a row read without its `version`.
 */
export class Tagged<T> {
  constructor(
    readonly body: T,
    readonly entityTag: string | undefined,
  ) {}

  /** Another representation of the same row version (v2's shape built from v1's, inside the v2 request) with the same tag. */
  map<U>(shape: (body: T) => U): Tagged<U> {
    return new Tagged(shape(this.body), this.entityTag);
  }
}

/**
 * `body` with the entity tag of row `version` served as the current API version ({@link entityTag}):
 * a {@link Tagged} representation. A row without `version` (undefined or null) leaves it untagged.
 */
export function tagged<T>(body: T, version: unknown): Tagged<T> {
  return new Tagged(body, version === undefined || version === null ? undefined : entityTag(Number(version)));
}

/**
 * A resource write's precondition as its request states it (docs/writes.md#conditional-requests-etag-if-none-match-if-match),
 * handed by the controller to the service (`@WritePrecondition()`, src/common/writes/write-precondition.decorator.ts):
 * the parsed `If-Match`, and whether one is required.
 */
export interface WritePreconditions {
  /** `'*'`, the listed entity tags (quotes included, `W/` kept), or undefined without `If-Match`. */
  ifMatch?: '*' | string[];
  /** REQUIRE_IF_MATCH: a PUT/PATCH/DELETE of a resource without `If-Match` → 428. */
  required: boolean;
}

/**
 * Evaluates the request's `If-Match` (`preconditions`) against the loaded row (RFC 9110 §13.1.1, strong comparison;
 * §13.2.2: after authentication, authorization and existence, which the caller has checked by
 * loading it) and returns the extra condition of the one conditional UPDATE/DELETE that follows:
 * `{version}` when a tag matched — the write then changes the row only if nobody wrote it
 * meanwhile, so of two writes sent with the same `If-Match` exactly one succeeds — and `{}`
 * without `If-Match` or with `If-Match: *` (the row exists: it was just loaded).
 * Without `preconditions` (services called outside a request) there is no precondition: `{}`.
 * @throws 428 `precondition_required` when REQUIRE_IF_MATCH is on and no `If-Match` came;
 *   412 `precondition_failed` when no listed tag is the row's current one.
 */
export function versionCondition(preconditions: WritePreconditions | undefined, resource: string, id: number, version: number): { version?: number } {
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
