import { ApiException } from '../../src/common/errors/api-exception.js';

/** What an {@link ApiException} becomes on the wire: its status, ErrorResp `code` and `message`. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
}

function toRefusal(error: unknown): Refusal {
  if (!(error instanceof ApiException)) throw error;
  return { status: error.getStatus(), code: error.code, message: error.message };
}

/** The refusal `run` throws, or undefined when it returns; any other error is rethrown. For unit tests of policies. */
export function refusal(run: () => unknown): Refusal | undefined {
  try {
    run();
  } catch (error) {
    return toRefusal(error);
  }
  return undefined;
}

/** The refusal `promise` rejects with; fails when it resolves. For the service tier (test/services). */
export async function rejection(promise: Promise<unknown>): Promise<Refusal> {
  try {
    await promise;
  } catch (error) {
    return toRefusal(error);
  }
  throw new Error('expected a refusal (ApiException), but the call succeeded');
}
