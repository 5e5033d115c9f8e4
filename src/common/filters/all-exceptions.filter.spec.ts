import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  Logger,
  NotFoundException,
  RequestMethod,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { EntityNotFoundError, QueryFailedError } from 'typeorm';
import { FakeResponse, type FakeRequest, fakeRequest, httpContext } from '../../../test/unit/http-context.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../database/database-errors.js';
import { ApiException, badRequest, unauthorized, validationFailed } from '../errors/api-exception.js';
import { RouteTable } from '../routing/route-table.js';
import { AllExceptionsFilter } from './all-exceptions.filter.js';

const ROUTES = RouteTable.of([
  { path: '/v1/todos', method: RequestMethod.GET },
  { path: '/v1/todos', method: RequestMethod.POST },
  { path: '/v1/todos/:id', method: RequestMethod.GET },
  { path: '/v1/todos/:id', method: RequestMethod.DELETE },
  { path: '/v1/logout', method: RequestMethod.POST },
]);

/** What the filter writes for `exception` on `req`: status, body, headers (lower-case names). */
function answer(exception: unknown, req: FakeRequest = fakeRequest('GET', '/v1/todos/1', { headers: { 'x-request-id': 'req-1' } }), res = new FakeResponse()) {
  new AllExceptionsFilter(ROUTES).catch(exception, httpContext(req, res));
  return { status: res.statusCode, body: res.body as Record<string, unknown>, headers: res.headers, res };
}

describe('AllExceptionsFilter (docs/errors.md#the-body: every error is an ErrorResp)', () => {
  let logged: jest.Spied<Logger['error']>;
  beforeEach(() => {
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => logged.mockRestore());

  it("writes the service's ApiException as {error, code, details, request_id} with its status and headers", () => {
    const { status, body, headers } = answer(new ApiException(429, 'slow down', [{ field: 'x', message: 'too often' }], { 'Retry-After': '30' }));
    expect(status).toBe(429);
    expect(body).toEqual({ error: 'slow down', code: 'rate_limited', details: [{ field: 'x', message: 'too often' }], request_id: 'req-1' });
    expect(headers['retry-after']).toBe('30');
    expect(headers['x-request-id']).toBe('req-1');
    expect(logged).not.toHaveBeenCalled();
  });

  it('leaves `details` out when there are none, and gives the request an id when it sent no sane one', () => {
    const { body, headers } = answer(badRequest('no'), fakeRequest('GET', '/v1/todos', { headers: { 'x-request-id': 'not sane!' } }));
    expect(Object.keys(body)).toEqual(['error', 'code', 'request_id']);
    expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(headers['x-request-id']).toBe(body.request_id);
  });

  it('writes validation failures as 422 validation_failed and malformed input as 400, each with its details', () => {
    const invalid = answer(validationFailed([{ field: 'title', message: 'title must be at most 200 characters' }]));
    expect([invalid.status, invalid.body.code, invalid.body.error]).toEqual([422, 'validation_failed', 'title must be at most 200 characters']);
    expect(invalid.body.details).toEqual([{ field: 'title', message: 'title must be at most 200 characters' }]);
    const malformed = answer(
      badRequest('2 fields are invalid', [
        { field: 'a', message: 'a is required' },
        { field: 'b', message: 'b must be a string' },
      ]),
    );
    expect([malformed.status, malformed.body.code, (malformed.body.details as unknown[]).length]).toEqual([400, 'bad_request', 2]);
  });

  it('keeps the WWW-Authenticate header of a 401 and gives a plain UnauthorizedException one', () => {
    expect(answer(unauthorized('invalid or expired token', true)).headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
    const plain = answer(new UnauthorizedException());
    expect([plain.status, plain.body.code, plain.headers['www-authenticate']]).toEqual([401, 'unauthorized', 'Bearer realm="api"']);
  });

  it("uses a Nest HttpException's message (joined when it is a list), its status and code", () => {
    const list = answer(new BadRequestException(['title must be a string', 'done must be a boolean']));
    expect([list.status, list.body.error, list.body.code]).toEqual([400, 'title must be a string; done must be a boolean', 'bad_request']);
    const forbidden = answer(new ForbiddenException('not yours'));
    expect([forbidden.status, forbidden.body.error, forbidden.body.code]).toEqual([403, 'not yours', 'forbidden']);
  });

  it('maps statuses the contract does not have to 400 or 500, and never shows a 5xx message', () => {
    const teapot = answer(new HttpException('short and stout', 418));
    expect([teapot.status, teapot.body.code, teapot.body.error]).toEqual([400, 'bad_request', 'bad request']);
    const storage = answer(new HttpException('disk /dev/sda1 full', 507));
    expect([storage.status, storage.body.code, storage.body.error]).toEqual([500, 'internal', 'internal server error']);
    const unavailable = answer(new ServiceUnavailableException('pool exhausted at db-3.internal'));
    expect([unavailable.status, unavailable.body.error]).toEqual([503, 'service unavailable']);
  });

  it("answers TypeORM's not-found with 404 and constraint violations with 409, on both databases", () => {
    const missing = answer(new EntityNotFoundError('Todo', { id: 1 }));
    expect([missing.status, missing.body.code, missing.body.error]).toEqual([404, 'not_found', 'not found']);
    const failed = (code: string) => new QueryFailedError('INSERT …', ['secret parameter'], Object.assign(new Error('constraint'), { code }));
    for (const code of ['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']) {
      expect([answer(failed(code)).status, answer(failed(code)).body.error]).toEqual([409, 'a unique value is already taken']);
    }
    for (const code of ['23503', 'SQLITE_CONSTRAINT_FOREIGNKEY']) {
      expect([answer(failed(code)).status, answer(failed(code)).body.code]).toEqual([409, 'conflict']);
    }
    const other = answer(failed('42P01'));
    expect([other.status, other.body.error]).toEqual([500, 'internal server error']);
    expect(JSON.stringify(other.body)).not.toMatch(/INSERT|secret parameter/);
  });

  it('answers an unavailable database with 503 and Retry-After, and logs it', () => {
    const down = answer(new QueryFailedError('SELECT 1', [], Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' })));
    expect([down.status, down.body.code, down.headers['retry-after']]).toEqual([503, 'service_unavailable', String(DATABASE_RETRY_AFTER_SECONDS)]);
    expect(down.body.error).toBe('the database is unavailable; retry later');
    expect(logged).toHaveBeenCalledTimes(1);
  });

  it("maps body-parser's errors by type, without their own (input-quoting) messages", () => {
    const tooLarge = answer(Object.assign(new Error('request entity too large: 200000 > 102400'), { type: 'entity.too.large' }));
    expect([tooLarge.status, tooLarge.body.code, tooLarge.body.error]).toEqual([413, 'payload_too_large', 'request body is larger than 100 KiB']);
    const parse = answer(Object.assign(new SyntaxError('Unexpected token } in JSON at position 12: {"secret":}'), { type: 'entity.parse.failed' }));
    expect([parse.status, parse.body.error]).toEqual([400, 'request body is not valid JSON']);
  });

  it('answers anything else with 500 and no internals (no message, no stack), and logs the error', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'owner_id')");
    // as every request arrives: the first middleware gave it its id (ensureRequestId)
    const { status, body } = answer(bug, fakeRequest('GET', '/v1/todos/1', { id: 'req-1' }));
    expect(status).toBe(500);
    expect(body).toEqual({ error: 'internal server error', code: 'internal', request_id: 'req-1' });
    expect(logged).toHaveBeenCalledWith(expect.objectContaining({ err: bug, req_id: 'req-1' }), 'request failed');
    expect(answer('a thrown string').status).toBe(500);
    expect(answer(null).status).toBe(500);
  });

  describe('a request no route serves (docs/wire.md#paths)', () => {
    const unmatched = (method: string, path: string) => answer(new NotFoundException(`Cannot ${method} ${path}`), fakeRequest(method, path));

    it('is 404 on a path no route has', () => {
      const { status, body, headers } = unmatched('GET', '/v1/nothing');
      expect([status, body.code, body.error]).toEqual([404, 'not_found', 'no route for /v1/nothing']);
      expect(headers.allow).toBeUndefined();
    });

    it('is 405 with Allow on a path routes have for other methods (HEAD beside GET, OPTIONS refused too)', () => {
      const remove = unmatched('DELETE', '/v1/todos');
      expect([remove.status, remove.body.code, remove.headers.allow]).toEqual([405, 'method_not_allowed', 'GET, HEAD, POST']);
      expect(remove.body.error).toBe('DELETE is not allowed on /v1/todos; allowed: GET, HEAD, POST');
      expect(unmatched('PATCH', '/v1/todos/3').headers.allow).toBe('GET, HEAD, DELETE');
      expect(unmatched('OPTIONS', '/v1/todos/3').status).toBe(405);
      const logout = unmatched('GET', '/v1/logout');
      expect([logout.status, logout.headers.allow]).toEqual([405, 'POST']);
    });

    it("tells the not-found of a served route (a handler's NotFoundException) from an unmatched one, whatever its text", () => {
      const thrown = answer(new NotFoundException('todo 3 not found'), fakeRequest('GET', '/v1/todos/3'));
      expect([thrown.status, thrown.body.error, thrown.headers.allow]).toEqual([404, 'todo 3 not found', undefined]);
      // Nest's wording is not what decides: an unmatched request is 405 whatever the message says
      const reworded = answer(new NotFoundException('Route not found'), fakeRequest('PUT', '/v1/todos'));
      expect([reworded.status, reworded.headers.allow]).toEqual([405, 'GET, HEAD, POST']);
    });
  });

  it('only ends a response whose headers were already sent', () => {
    const res = new FakeResponse();
    res.headersSent = true;
    const { res: written } = answer(new Error('late failure'), undefined, res);
    expect(written.ended).toBe(true);
    expect(written.body).toBeUndefined();
    expect(written.statusCode).toBe(200);
  });
});
