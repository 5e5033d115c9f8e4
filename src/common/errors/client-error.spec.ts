import { describe, expect, it } from '@jest/globals';
import { clientErrorAnswer, clientErrorResponse } from './client-error.js';

describe('clientErrorAnswer', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408],
    ['HPE_INVALID_METHOD', 400],
    [undefined, 400],
  ])('maps %s to %i', (code, status) => {
    expect(clientErrorAnswer(code).status).toBe(status);
  });
});

describe('clientErrorResponse', () => {
  it('is a complete HTTP/1.1 response with an ErrorResp body, the request id and Connection: close', () => {
    const text = clientErrorResponse(clientErrorAnswer('HPE_HEADER_OVERFLOW'), 'id-1');
    const [head, body] = text.split('\r\n\r\n');
    expect(head.split('\r\n')).toEqual([
      'HTTP/1.1 431 Request Header Fields Too Large',
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'X-Request-Id: id-1',
      'X-Content-Type-Options: nosniff',
      'Cache-Control: no-store',
      'Connection: close',
    ]);
    expect(JSON.parse(body)).toEqual({ error: 'request line and headers are too large', code: 'bad_request', request_id: 'id-1' });
  });
});
