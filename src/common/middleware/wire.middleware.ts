import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { ApiException, badRequest, type ErrorDetail } from '../errors/api-exception.js';
import { writeErrorResp } from '../errors/write-error.js';
import { servedUrl } from '../versioning/version-negotiation.js';
import { takesForm } from './form-body.js';
import { bodyProblems, CREDENTIAL_QUERY_PARAMS, jsonDepth, MAX_JSON_DEPTH, pathProblem, queryProblems } from './input-rules.js';
import { ensureRequestId } from './request-id.js';
import { RouteTable } from '../routing/route-table.js';
import { requestContext } from '../../context/request-context.js';

export { CREDENTIAL_QUERY_PARAMS, MAX_JSON_DEPTH };

/** Maximum request body size in bytes (docs/limits.md#requests: 100 KiB → 413), counted after decompression. */
export const MAX_BODY_BYTES = 100 * 1024;

/** Most parameters a form body may have (more → 413). */
export const MAX_FORM_PARAMETERS = 100;

/**
 * The `Content-Encoding`s a request body may have (docs/wire.md#request-bodies): none (`identity`), `gzip`, `deflate`
 * (zlib) and `br` (Brotli), decompressed before the size limit applies. Any other, or more than
 * one, → 415.
 */
export const SUPPORTED_CONTENT_ENCODINGS = ['identity', 'gzip', 'deflate', 'br'];

const JSON_TYPES = new Set(['application/json']);
const FORM_TYPES = new Set(['application/x-www-form-urlencoded']);

const PATCH_TYPES = new Set(['application/json', 'application/merge-patch+json']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Reads the body as bytes (decompressed, at most {@link MAX_BODY_BYTES}); parsing is ours. */
const readRaw = express.raw({ limit: MAX_BODY_BYTES, inflate: true, type: () => true });

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function refuse(message: string, details: ErrorDetail[]): ApiException {
  return badRequest(details.length === 1 ? details[0].message : message, details);
}

/** The paths served before Nest's pipeline (the docs page, its assets and documents). */
const OUTSIDE_NEST = /^\/docs(\/|\?|$)/;

/**
 * The refusal of a request target (docs/wire.md#query-strings, docs/errors.md#codes), `undefined` when it is clean: a credential-named
 * query parameter ({@link CREDENTIAL_QUERY_PARAMS}; its value is never logged or echoed), U+0000
 * in a query parameter's name or value (naming the parameter), or in the path (`%00`, naming
 * `path`) → 400 listing each.
 */
export function targetRefusal(url: string): ApiException | undefined {
  const q = url.indexOf('?');
  const details = q === -1 ? [] : queryProblems(url.slice(q + 1));
  const inPath = pathProblem(q === -1 ? url : url.slice(0, q));
  if (inPath) details.unshift(inPath);
  if (details.length === 0) return undefined;
  const credentials = details.some((detail) => CREDENTIAL_QUERY_PARAMS.includes(detail.field));
  if (credentials) return badRequest('credentials are not accepted in the query string; send them in a header', details);
  return refuse(`${details.length} fields are invalid`, details);
}

/**
 * Express middleware applying {@link targetRefusal} on every path, installed by configureApp
 * before the docs and routing. The docs (`/docs*`), served outside Nest's pipeline, are answered
 * here with `ErrorResp`; every other request carries its refusal on to the WireMiddleware (in the
 * request context's `targetRefusal`, src/context/request-context.ts), the
 * first middleware after the request logger, which throws it — so the refusal is logged (with
 * the credential parameters redacted) and written by the exception filter like any other.
 */
export function requestTargetRules() {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const url = req.url ?? '/';
    const refusal = targetRefusal(url);
    if (!refusal) return next();
    if (OUTSIDE_NEST.test(url)) return writeErrorResp(req, res, 400, refusal.message, {}, refusal.details);
    const context = requestContext();
    if (!context) return writeErrorResp(req, res, 400, refusal.message, {}, refusal.details);
    context.targetRefusal = refusal;
    next();
  };
}

/** Parses a form body (`a=1&b=2`, repeated names → arrays of strings). @throws 413 over {@link MAX_FORM_PARAMETERS}. */
function parseForm(text: string): Record<string, string | string[]> {
  const params = new URLSearchParams(text);
  let count = 0;
  const out: Record<string, string | string[]> = {};
  const problems: ErrorDetail[] = [];
  for (const [name, value] of params) {
    if (++count > MAX_FORM_PARAMETERS) throw new ApiException(413, `request body has more than ${MAX_FORM_PARAMETERS} form parameters`);
    // checked before the name becomes a property: `__proto__` would otherwise reach the prototype
    const found = bodyProblems(Object.defineProperty({}, name, { value, enumerable: true }));
    if (found.length > 0) {
      problems.push(...found);
      continue;
    }
    const previous = out[name];
    out[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  if (problems.length > 0) throw refuse(`${problems.length} fields are invalid`, problems);
  return out;
}

/**
 * The wire rules of docs/wire.md, on every path Nest serves: first the refusal
 * {@link requestTargetRules} recorded (query and path rules); then, for request bodies, after
 * routing was decided (a request no route takes with its method is left to the 404/405 answer,
 * whatever its body):
 * - a body on POST/PUT/PATCH must be `application/json` (PATCH also `application/merge-patch+json`)
 *   with charset UTF-8 → else 415; on the routes of POST operations marked `@FormBody()` (the
 *   OAuth form endpoints; {@link takesForm}) only `application/x-www-form-urlencoded` (at most 100
 *   parameters, else 413) → else 415;
 * - `Content-Encoding` one of {@link SUPPORTED_CONTENT_ENCODINGS} → else 415; a corrupt
 *   compressed body → 400; more than 100 KiB after decompression → 413;
 * - bytes that are not valid UTF-8 → 400; a JSON text nested deeper than {@link MAX_JSON_DEPTH}
 *   → 400 (counted on the raw text, before parsing); malformed JSON or not an object → 400;
 * - every string and property name at any depth: U+0000 or an unpaired surrogate → 400, and
 *   `__proto__`, `constructor`, `prototype` and the other `Object.prototype` names → 400, each
 *   naming the field path (input-rules.ts `bodyProblems`).
 * Errors are thrown, not passed to `next`, so the global exception filter writes them. The raw
 * body is never attached to an error or logged.
 */
@Injectable()
export class WireMiddleware implements NestMiddleware {
  constructor(private readonly routes: RouteTable) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    ensureRequestId(req, res);
    const refusal = requestContext()?.targetRefusal;
    if (refusal) throw refusal;
    if (!BODY_METHODS.has(req.method) || !hasBody(req)) return next();
    const path = servedUrl(req).split('?')[0];
    // routing first: an unknown path is 404, a known one without this method 405, whatever the body
    if (!this.routes.serves(path, req.method)) return next();
    const contentType = req.headers['content-type'];
    const [mediaType, ...params] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
    const form = req.method === 'POST' && takesForm(req);
    const allowed = form ? FORM_TYPES : req.method === 'PATCH' ? PATCH_TYPES : JSON_TYPES;
    if (!allowed.has(mediaType)) {
      const accepted = [...allowed].join(' or ');
      throw new ApiException(415, contentType ? `content type ${mediaType} is not supported; send ${accepted}` : `Content-Type is required; send ${accepted}`);
    }
    const charset = params
      .find((p) => p.startsWith('charset='))
      ?.slice(8)
      .replace(/"/g, '');
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw new ApiException(415, `charset ${charset} is not supported; send utf-8`);
    }
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (!SUPPORTED_CONTENT_ENCODINGS.includes(encoding)) {
      throw new ApiException(415, `content encoding ${encoding.slice(0, 40)} is not supported; send ${SUPPORTED_CONTENT_ENCODINGS.join(', ')}`);
    }
    req.headers['content-encoding'] = encoding;
    const raw = await new Promise<Buffer>((resolve, reject) =>
      readRaw(req, res, (err?: unknown) => {
        if (!err) return resolve(Buffer.isBuffer(req.body) ? (req.body as Buffer) : Buffer.alloc(0));
        const type = (err as { type?: unknown }).type;
        // raw-body's own errors carry a `type`; an untyped one is the decompression stream's
        if (type === undefined && encoding !== 'identity') return reject(badRequest(`request body is not valid ${encoding} data`));
        reject(typeof type === 'string' ? { type } : err);
      }),
    );
    req.body = undefined;
    if (!isUtf8(raw)) throw badRequest('request body is not valid UTF-8');
    let text = raw.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let body: unknown;
    if (form) {
      body = parseForm(text);
    } else {
      if (jsonDepth(text) > MAX_JSON_DEPTH) throw badRequest(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
      try {
        body = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        throw badRequest('request body is not valid JSON');
      }
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badRequest('request body must be a JSON object');
    }
    const problems = bodyProblems(body);
    if (problems.length > 0) throw refuse(`${problems.length} fields are invalid`, problems);
    req.body = body;
    next();
  }
}
