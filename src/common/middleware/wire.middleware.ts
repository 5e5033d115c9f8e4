import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { ApiException, badRequest } from '../errors/api-exception.js';
import { API_VERSIONS } from '../versioning/api-versions.js';
import { ensureRequestId } from './request-id.js';

/** Query parameter names that would carry a credential (SPEC §3): always refused with 400. */
export const CREDENTIAL_QUERY_PARAMS = ['access_token', 'token', 'api_key', 'apikey', 'key'];

/** Maximum request body size in bytes (SPEC §7: 100 KiB → 413). */
export const MAX_BODY_BYTES = 100 * 1024;

const JSON_TYPES = new Set(['application/json']);
const FORM_TYPES = new Set(['application/x-www-form-urlencoded']);

/**
 * The OAuth endpoints whose bodies are `application/x-www-form-urlencoded` (RFC 6749 §4.1.3 for
 * token and revocation; the sign-in and consent HTML forms): the only non-JSON request bodies.
 */
export const FORM_PATHS = new Set(API_VERSIONS.flatMap((version) => ['token', 'revoke', 'authorize', 'sign-in'].map((endpoint) => `/v${version}/oauth/${endpoint}`)));
const PATCH_TYPES = new Set(['application/json', 'application/merge-patch+json']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });
const parseForm = express.urlencoded({ extended: false, limit: MAX_BODY_BYTES, parameterLimit: 100, type: () => true });

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The wire rules of SPEC §1 that come before routing, for every route:
 * - `X-Request-Id` assigned and echoed;
 * - any credential-named query parameter → 400 (its value is never logged: see the logger's URL redaction);
 * - a body on POST/PUT/PATCH must be `application/json` (PATCH also `application/merge-patch+json`),
 *   UTF-8 → else 415; larger than 100 KiB → 413; malformed JSON or not an object → 400;
 * - except on the OAuth {@link FORM_PATHS}, which take only `application/x-www-form-urlencoded`
 *   (UTF-8, at most 100 parameters) → else 415.
 * Errors are thrown, not passed to `next`, so the global exception filter writes them.
 */
@Injectable()
export class WireMiddleware implements NestMiddleware {
  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    ensureRequestId(req, res);
    const query = req.url.indexOf('?');
    if (query !== -1) {
      const params = new URLSearchParams(req.url.slice(query + 1));
      const found = CREDENTIAL_QUERY_PARAMS.filter((name) => params.has(name));
      if (found.length > 0) {
        throw badRequest(
          'credentials are not accepted in the query string; send them in a header',
          found.map((field) => ({ field, message: `${field} is not accepted in the query string` })),
        );
      }
    }
    if (!BODY_METHODS.has(req.method) || !hasBody(req)) return next();
    const contentType = req.headers['content-type'];
    const [mediaType, ...params] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
    const form = req.method === 'POST' && FORM_PATHS.has(req.originalUrl.split('?')[0]);
    const allowed = form ? FORM_TYPES : req.method === 'PATCH' ? PATCH_TYPES : JSON_TYPES;
    if (!allowed.has(mediaType)) {
      const accepted = [...allowed].join(' or ');
      throw new ApiException(415, contentType ? `content type ${mediaType} is not supported; send ${accepted}` : `Content-Type is required; send ${accepted}`);
    }
    const charset = params.find((p) => p.startsWith('charset='))?.slice(8).replace(/"/g, '');
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw new ApiException(415, `charset ${charset} is not supported; send utf-8`);
    }
    await new Promise<void>((resolve, reject) => (form ? parseForm : parseJson)(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    const body: unknown = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badRequest('request body must be a JSON object');
    }
    next();
  }
}
