import type { NextFunction, Request, Response } from 'express';
import { requestContext } from '../../context/request-context.js';
import { writeErrorResp } from '../errors/write-error.js';
import { API_VERSIONS, isApiVersion, isOperationalPath, versionOfPath } from './api-versions.js';

/** The vendor media type (docs/versioning.md#choosing-the-version): `application/vnd.resource-api.v2+json`. */
export const VENDOR_MEDIA_TYPE = /^application\/vnd\.resource-api\.v(\d+)\+json$/i;

/** What {@link negotiateVersion} decides for one request. */
export type Negotiation =
  /** Route as is: a prefixed path that agrees with the header and host, an operational path, or no version asked for. */
  | { kind: 'pass'; vary: boolean }
  /** Serve as `/v<version><path>`: an unprefixed path whose version the Accept header or the subdomain chose. */
  | { kind: 'rewrite'; version: string; via: 'accept' | 'host'; vary: boolean }
  /** Refuse with an `ErrorResp`. */
  | { kind: 'error'; status: 400 | 404 | 406; message: string };

/**
 * The API versions named by vendor media types in an `Accept` header, best first (by `q`, then
 * order; `q=0` ranges are left out). Other media ranges are ignored.
 */
export function vendorVersions(accept: string | undefined): string[] {
  if (!accept) return [];
  const ranges: Array<{ version: string; q: number; index: number }> = [];
  accept.split(',').forEach((range, index) => {
    const [type, ...params] = range.split(';').map((part) => part.trim());
    const match = VENDOR_MEDIA_TYPE.exec(type);
    if (!match) return;
    const qParam = params.find((param) => /^q=/i.test(param));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q) || q <= 0) return;
    ranges.push({ version: String(Number(match[1])), q, index });
  });
  return ranges.sort((a, b) => b.q - a.q || a.index - b.index).map((range) => range.version);
}

/**
 * The version a host name selects: `v2.api.example.com` with base host `api.example.com` → `'2'`;
 * undefined for the base host itself, another host, or no base host configured.
 */
export function subdomainVersion(hostname: string | undefined, baseHost: string | undefined): string | undefined {
  if (!hostname || !baseHost) return undefined;
  const host = hostname.toLowerCase();
  if (!host.endsWith(`.${baseHost}`)) return undefined;
  return /^v(\d+)$/.exec(host.slice(0, -baseHost.length - 1))?.[1]?.replace(/^0+(?=\d)/, '');
}

const versionList = API_VERSIONS.map((v) => `v${v}`).join(', ');

/**
 * Decides which API version serves a request (docs/versioning.md#choosing-the-version; the path prefix is canonical):
 * - the root `/` and the operational paths (`/health`, `/docs`, `/.well-known`) are unversioned: always `pass`;
 * - a prefixed path (`/v1/…`) is served by its prefix; a vendor `Accept` type or a version
 *   subdomain naming another version → 400;
 * - an unprefixed path is served by the version the `Accept` vendor type names
 *   (`application/vnd.resource-api.v2+json`) or the subdomain (`v2.<API_BASE_HOST>`); both given
 *   and different → 400; a vendor type naming only unknown versions → 406; a version subdomain of
 *   an unknown version → 404. With neither, the path is routed as is (an unknown route, 404).
 *   Unprefixed responses vary by `Accept` (`vary: true`).
 */
export function negotiateVersion(input: { path: string; accept?: string; hostname?: string; baseHost?: string }): Negotiation {
  if (input.path === '/' || isOperationalPath(input.path)) return { kind: 'pass', vary: false };
  const named = vendorVersions(input.accept);
  const host = subdomainVersion(input.hostname, input.baseHost);
  const prefix = versionOfPath(input.path);
  if (prefix !== undefined) {
    if (named.length > 0 && !named.includes(prefix)) {
      return {
        kind: 'error',
        status: 400,
        message: `the path asks for API v${prefix} but Accept asks for ${named.map((v) => `v${v}`).join(', ')}; send one version`,
      };
    }
    if (host !== undefined && host !== prefix) {
      return { kind: 'error', status: 400, message: `the path asks for API v${prefix} but the host name asks for v${host}; send one version` };
    }
    return { kind: 'pass', vary: false };
  }
  const served = named.filter(isApiVersion);
  if (named.length > 0 && served.length === 0) {
    return {
      kind: 'error',
      status: 406,
      message: `API ${named.map((v) => `v${v}`).join(', ')} does not exist; Accept one of ${API_VERSIONS.map((v) => `application/vnd.resource-api.v${v}+json`).join(', ')}`,
    };
  }
  if (host !== undefined && !isApiVersion(host)) return { kind: 'error', status: 404, message: `API v${host} does not exist (versions: ${versionList})` };
  if (served.length > 0 && host !== undefined && served[0] !== host) {
    return { kind: 'error', status: 400, message: `the host name asks for API v${host} but Accept asks for v${served[0]}; send one version` };
  }
  if (served.length > 0) return { kind: 'rewrite', version: served[0], via: 'accept', vary: true };
  if (host !== undefined) return { kind: 'rewrite', version: host, via: 'host', vary: true };
  return { kind: 'pass', vary: true };
}

/** The URL a request was routed with: the rewritten `/v<n>/…` one when a header or subdomain chose the version (the request context's `servedUrl`), else `originalUrl`. */
export function servedUrl(req: Request): string {
  return requestContext()?.servedUrl ?? req.originalUrl;
}

/**
 * Express middleware applying {@link negotiateVersion} before routing (installed by configureApp):
 * rewrites `req.url` to the prefixed path, so the router, 404/405 handling, list links and
 * `Location` all see the canonical `/v<n>/…` path (`originalUrl` keeps what was sent); adds
 * `Vary: Accept`; answers 400/404/406 with `ErrorResp` itself. `baseHost` is API_BASE_HOST.
 */
export function versionNegotiation(baseHost: string | undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    // the host name is read only when a base host makes version subdomains possible
    const decision = negotiateVersion({ path: req.path, accept: req.headers.accept, hostname: baseHost ? req.hostname : undefined, baseHost });
    if (decision.kind === 'error') return writeErrorResp(req, res, decision.status, decision.message);
    if (decision.vary) res.vary('Accept');
    if (decision.kind === 'rewrite') {
      req.url = `/v${decision.version}${req.url}`;
      const context = requestContext();
      if (context) context.servedUrl = req.url;
    }
    next();
  };
}
