// Plain request/response objects and Nest's ExecutionContextHost for the unit tests of guards,
// interceptors and the exception filter (src/**/*.spec.ts): no Nest application, no HTTP server,
// no database — the pattern of the testing-nestjs samples.
import type { Type } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { AuthUser } from '../../src/common/caller/auth-user.js';

/** The parts of an Express request the guards, interceptors and filter read. */
export interface FakeRequest {
  method: string;
  path: string;
  baseUrl: string;
  originalUrl: string;
  url: string;
  headers: Record<string, string | undefined>;
  query: Record<string, unknown>;
  cookies: Record<string, string>;
  body?: unknown;
  user?: AuthUser;
  id?: string;
}

/** A request for `method` and `url` (`/v1/todos?x=1`); `overrides` replace any field. */
export function fakeRequest(method: string, url: string, overrides: Partial<FakeRequest> = {}): FakeRequest {
  const [path, search = ''] = url.split('?');
  return {
    method,
    path,
    baseUrl: '',
    originalUrl: url,
    url,
    headers: {},
    query: Object.fromEntries(new URLSearchParams(search)),
    cookies: {},
    ...overrides,
  };
}

/** An Express-like response that records what is written: status, headers (lower-case names), JSON body. */
export class FakeResponse {
  statusCode = 200;
  headersSent = false;
  ended = false;
  body: unknown;
  readonly headers: Record<string, string> = {};

  setHeader(name: string, value: string | number): this {
    this.headers[name.toLowerCase()] = String(value);
    return this;
  }

  getHeader(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }

  header(name: string, value: string): this {
    return this.setHeader(name, value);
  }

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  json(body: unknown): this {
    this.body = body;
    this.headersSent = true;
    return this;
  }

  end(): this {
    this.ended = true;
    this.headersSent = true;
    return this;
  }
}

/**
 * The ExecutionContext of an HTTP call of `controller.prototype[handler]` with `req` and `res`, as
 * Nest builds it for guards and interceptors (context type `http`).
 */
export function httpContext(req: FakeRequest, res: FakeResponse = new FakeResponse(), controller?: Type, handler?: string): ExecutionContextHost {
  const method = controller && handler ? (controller.prototype as Record<string, Function>)[handler] : undefined;
  const context = new ExecutionContextHost([req, res, () => undefined], controller ?? null, method ?? null);
  context.setType('http');
  return context;
}
