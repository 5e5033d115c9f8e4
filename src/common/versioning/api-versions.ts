import { type INestApplication, VERSION_NEUTRAL, VersioningType } from '@nestjs/common';
import { PATH_METADATA, VERSION_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { requestContext, withRequestContext } from '../../context/request-context.js';

/** The API versions served, oldest first (docs/versioning.md). Each is a path prefix `/v<n>`. */
export const API_VERSIONS = ['1', '2'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

/** The newest version: what `/docs/openapi.json` describes. */
export const LATEST_VERSION: ApiVersion = API_VERSIONS[API_VERSIONS.length - 1];

/** `info.version` of each version's OpenAPI document: the major is the path prefix (docs/versioning.md). */
export const DOCUMENT_VERSIONS: Readonly<Record<ApiVersion, string>> = { '1': '1.1.0', '2': '2.0.0' };

/**
 * The version prefix as the OpenAPI texts and examples write it where they name a versioned path
 * (`POST /v{version}/login`, `/v{version}/todos/1`, in decorators, doc comments and docs.ts): each
 * version's document is built with its own prefix there ({@link inVersion}, applied by
 * versionDocument), so no text is written for one version and rewritten for another.
 */
export const VERSION_PLACEHOLDER = '/v{version}/';

/** `text` as API `version` (`'2'`) says it: every {@link VERSION_PLACEHOLDER} becomes `/v2/`. */
export function inVersion(text: string, version: string): string {
  return text.includes(VERSION_PLACEHOLDER) ? text.replaceAll(VERSION_PLACEHOLDER, `/v${version}/`) : text;
}

/** True for a version this service serves. */
export function isApiVersion(version: string): version is ApiVersion {
  return (API_VERSIONS as readonly string[]).includes(version);
}

/** Operational paths are unversioned (docs/wire.md#paths): `/health*`, `/docs*`, `/.well-known*`, `/metrics`. */
const OPERATIONAL_PATH = /^\/?(health|docs|\.well-known|metrics)(\/|$|-)/;

/** True when `path` (a request path or a controller path) is an operational, unversioned one. */
export function isOperationalPath(path: string): boolean {
  return OPERATIONAL_PATH.test(path);
}

/** The version prefix of a request path: `/v2/articles` → `'2'`, `/articles` → undefined. Any number, served or not. */
export function versionOfPath(path: string): string | undefined {
  return /^\/v(\d+)(\/|$)/.exec(path)?.[1];
}

/**
 * Serves every controller under each API version (URI versioning: `/v1/todos`, `/v2/todos`, the
 * version is the path prefix, docs/versioning.md#choosing-the-version). A controller says nothing about versions unless
 * its shapes differ between them (`@Controller({ path: 'articles', version: '2' })`).
 * Operational controllers (`health`, `.well-known`, `docs`) without a version of their own become
 * `VERSION_NEUTRAL` here, so they stay unversioned (docs/wire.md#paths).
 * Call before `init()` (routes are registered then): configureApp and the docs export do.
 * @throws Error naming the controller when its path carries a version segment itself
 *   (`v1/things`): the prefix comes from here, it would be served as `/v1/v1/things`.
 */
export function enableApiVersioning(app: INestApplication): void {
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (!metatype) continue;
      const paths = [Reflect.getMetadata(PATH_METADATA, metatype) as string | string[] | undefined].flat();
      const literal = paths.find((path) => typeof path === 'string' && versionOfPath(`/${path.replace(/^\//, '')}`) !== undefined);
      if (literal !== undefined) {
        throw new Error(
          `${metatype.name}: controller path '${literal}' carries a version; write '${literal.replace(/^\/?v\d+\/?/, '')}' — every controller is served under ${API_VERSIONS.map((v) => `/v${v}`).join(' and ')} (src/common/versioning/api-versions.ts)`,
        );
      }
      const operational = paths.length > 0 && paths.every((path) => typeof path === 'string' && isOperationalPath(path));
      if (operational && Reflect.getMetadata(VERSION_METADATA, metatype) === undefined) Reflect.defineMetadata(VERSION_METADATA, VERSION_NEUTRAL, metatype);
    }
  }
  app.enableVersioning({ type: VersioningType.URI, defaultVersion: [...API_VERSIONS] });
}

/**
 * Runs `handle` — and everything it awaits — as serving API `version` (`'2'`), so that the links
 * resource mappers write meanwhile point into that version ({@link linkPrefix}). RequestScopeInterceptor
 * runs every handler of a versioned path so, whatever chose the version (path, Accept or subdomain).
 */
export function serveAsVersion<T>(version: string, handle: () => T): T {
  return withRequestContext({ apiVersion: version }, handle);
}

/**
 * The prefix of the `links` a resource mapper writes (docs/lists.md#the-envelope, docs/versioning.md#choosing-the-version: the path
 * prefix is canonical in links): `/v2` while a v2 request is served, so every href is written
 * right the first time and no response is rewritten afterwards; `/v1` outside a request (the
 * import CLI, unit tests).
 */
export function linkPrefix(): string {
  return `/v${requestContext()?.apiVersion ?? '1'}`;
}

/** The API version the current request is served as (`'2'` under `/v2`), `'1'` outside a request (as {@link linkPrefix}). */
export function servedVersion(): ApiVersion {
  const version = linkPrefix().slice(2);
  return isApiVersion(version) ? version : '1';
}
