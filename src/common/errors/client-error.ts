import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from './api-exception.js';

/** How long a refused connection may stay half-open for the client to read the answer, in ms. */
const CLOSE_GRACE_MS = 2_000;

/** The answer to a request Node's HTTP parser refused: status, `ErrorResp` code and message. */
export interface ClientErrorAnswer {
  status: 400 | 408 | 413 | 431;
  code: ErrorCode;
  message: string;
}

/**
 * Maps the error of Node's HTTP parser (`clientError`) to its answer (docs/wire.md#request-bodies, docs/errors.md#codes): request line
 * and headers larger than the server's limit (`HPE_HEADER_OVERFLOW`) → 431; chunk extensions too
 * large → 413; the request not received in time (`ERR_HTTP_REQUEST_TIMEOUT`) → 408; anything else
 * (a malformed request line, header or chunk) → 400. The codes are those of docs/errors.md#codes
 * (`bad_request` for 400, 408 and 431).
 */
export function clientErrorAnswer(errorCode: string | undefined): ClientErrorAnswer {
  switch (errorCode) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'bad_request', message: 'request line and headers are too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'payload_too_large', message: 'chunk extensions are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'bad_request', message: 'the request was not received in time' };
    default:
      return { status: 400, code: 'bad_request', message: 'malformed HTTP request' };
  }
}

/** The complete raw HTTP/1.1 response for `answer`: `ErrorResp` JSON, a fresh `X-Request-Id`, `Connection: close`. */
export function clientErrorResponse(answer: ClientErrorAnswer, requestId: string = randomUUID()): string {
  const body = JSON.stringify({ error: answer.message, code: answer.code, request_id: requestId });
  return [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'X-Content-Type-Options: nosniff',
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Installs the `clientError` handler on the HTTP(S) server (docs/errors.md#the-body: every refusal is an
 * `ErrorResp` with a request id): a request Node's parser refuses before the application sees it
 * gets {@link clientErrorAnswer}'s status written straight to the socket, which is then closed.
 * A reset connection, a socket no longer writable, or one whose response already started is
 * destroyed instead (nothing may be written into another response).
 */
export function installClientErrorHandler(server: Server): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(clientErrorAnswer(error.code)));
    // the client reads the answer and closes; one that keeps the connection open is cut off
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  });
}
