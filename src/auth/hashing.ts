import { createHash } from 'node:crypto';

/** SHA-256 hex of a token: the only form in which refresh tokens, API keys and session ids are stored (docs/authentication.md#overview). */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
