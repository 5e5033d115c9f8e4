import { expect } from '@jest/globals';

/**
 * The expected `ErrorResp` body (docs/errors.md#the-body) for e2e assertions: `{error, code, request_id}` with the
 * given machine code, any request id, and any message unless `error` is given.
 */
export const errorBody = (code: string, error: unknown = expect.any(String)) => ({ error, code, request_id: expect.any(String) });
