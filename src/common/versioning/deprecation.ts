import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import type { Env } from '../../config/env.validation.js';
import { LATEST_VERSION, versionOfPath } from './api-versions.js';

/** Metadata key, and OpenAPI extension (removed from the output), of {@link DeprecatedVersion}. */
export const DEPRECATED_VERSION = 'x-deprecated-version';

/** Where the `rel="deprecation"` link points: the docs page, which states the dates (RFC 9745 §3). */
export const DEPRECATION_DOCS = '/docs';

/** The deprecation and sunset dates of one API version. */
export interface VersionDates {
  deprecatedAt: Date;
  sunsetAt: Date;
}

/** The dates of each deprecated API version, from the validated configuration (V1_DEPRECATED_AT, V1_SUNSET_AT; docs/versioning.md#deprecation-and-sunset). */
export function deprecationDates(config: Pick<Env, 'V1_DEPRECATED_AT' | 'V1_SUNSET_AT'>): Record<string, VersionDates> {
  return { '1': { deprecatedAt: config.V1_DEPRECATED_AT, sunsetAt: config.V1_SUNSET_AT } };
}

/**
 * Marks a controller's operations as belonging to a deprecated API version, superseded by the same
 * path in the newest version (docs/versioning.md#deprecation-and-sunset): every response carries the headers of
 * {@link deprecationHeaders} (CommonModule binds {@link deprecationMiddleware} to such controllers),
 * and the document marks the operations `deprecated: true` with the dates (docs.ts).
 */
export function DeprecatedVersion() {
  return applyDecorators(SetMetadata(DEPRECATED_VERSION, true), ApiExtension(DEPRECATED_VERSION, true));
}

/** `Wed, 30 Jun 2027 00:00:00 GMT`: the IMF-fixdate of RFC 9110 §5.6.7, as `Sunset` takes it (RFC 8594). */
export function httpDate(date: Date): string {
  return date.toUTCString();
}

/** Successor paths `Link` names as they are: segments of letters, digits, `_` and `-`, at most 512 characters. */
const LINKABLE_PATH = /^(\/[A-Za-z0-9_-]{1,64}){1,8}$/;
const MAX_LINKED_PATH = 512;

/**
 * The newest version's path for a request path: `/v1/articles/7` → `/v2/articles/7`. A path that
 * is no plausible resource path (a 10,000-character or percent-encoded id, which the request
 * answers with 400 anyway) links to its collection (`/v2/articles`), so the header stays within
 * its documented length whatever the client sent.
 */
function successorPath(path: string): string {
  const successor = path.replace(/^\/v\d+(?=\/|$)/, `/v${LATEST_VERSION}`);
  if (successor.length <= MAX_LINKED_PATH && LINKABLE_PATH.test(successor)) return successor;
  const collection = successor.split('/').slice(0, 3).join('/');
  return LINKABLE_PATH.test(collection) ? collection : `/v${LATEST_VERSION}`;
}

/**
 * The headers of a deprecated operation's response to a request for `path` (`/v1/articles/7`):
 * - `Deprecation: @<unix seconds>` (RFC 9745: a structured-field date, may lie in the future),
 * - `Sunset: <HTTP-date>` (RFC 8594),
 * - `Link: </v2/articles/7>; rel="successor-version", </docs>; rel="deprecation"; type="text/html"`
 *   (RFC 5829, RFC 9745 §3): the same resource in the newest version (its collection when the path
 *   is no plausible resource path, see {@link successorPath}), and the docs with the dates.
 */
export function deprecationHeaders(path: string, dates: VersionDates): Record<string, string> {
  return { ...fixedDeprecationHeaders(dates), Link: successorLink(path) };
}

/** The `Deprecation` and `Sunset` headers of a version: the same on every response, so written once. */
function fixedDeprecationHeaders(dates: VersionDates): { Deprecation: string; Sunset: string } {
  return { Deprecation: `@${Math.floor(dates.deprecatedAt.getTime() / 1000)}`, Sunset: httpDate(dates.sunsetAt) };
}

/** The `Link` header of a deprecated response to `path`: its successor and the docs. */
function successorLink(path: string): string {
  return `<${successorPath(path)}>; rel="successor-version", <${DEPRECATION_DOCS}>; rel="deprecation"; type="text/html"`;
}

/**
 * Express middleware setting {@link deprecationHeaders} on every response of the routes it is
 * bound to, by the version of the request path. A middleware rather than an interceptor, so that
 * responses decided before the handler (401/403 from guards, 400/404 from pipes) carry them too.
 * `Deprecation` and `Sunset` are formatted once, here; only `Link` depends on the request.
 */
export function deprecationMiddleware(dates: Record<string, VersionDates>) {
  const fixed = new Map(Object.entries(dates).map(([version, versionDates]) => [version, fixedDeprecationHeaders(versionDates)]));
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.baseUrl + req.path;
    const headers = fixed.get(versionOfPath(path) ?? '');
    if (headers) {
      res.setHeader('Deprecation', headers.Deprecation);
      res.setHeader('Sunset', headers.Sunset);
      res.setHeader('Link', successorLink(path));
    }
    next();
  };
}
