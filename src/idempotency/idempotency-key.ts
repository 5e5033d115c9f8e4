import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { ApiException, type ErrorDetail } from '../common/errors/api-exception.js';

/** The request header (draft-ietf-httpapi-idempotency-key-header) and the replay marker. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Longest accepted key, in characters (Stripe's bound; a UUID is 36). */
export const MAX_KEY_LENGTH = 255;

/** 1-255 printable ASCII characters (U+0020-U+007E). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

const keyDetail = (message: string): ErrorDetail => ({ field: IDEMPOTENCY_KEY_HEADER, message });

/**
 * The `Idempotency-Key` of a request: undefined when the header is absent, else its value (Node
 * has trimmed the surrounding white space; the value is opaque, quotes included).
 * @param rawHeaders the request's `rawHeaders` (name, value, name, value …), to count the fields.
 * @throws 400 `bad_request` naming the header when it is empty, longer than 255 characters, holds
 *   anything but printable ASCII, or is sent more than once.
 */
export function parseIdempotencyKey(rawHeaders: readonly string[]): string | undefined {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === 'idempotency-key') values.push(rawHeaders[i + 1].trim());
  }
  if (values.length === 0) return undefined;
  if (values.length > 1) {
    const message = `${IDEMPOTENCY_KEY_HEADER} must be sent once`;
    throw new ApiException(400, message, [keyDetail(message)]);
  }
  const key = values[0];
  if (!KEY_PATTERN.test(key)) {
    const message = `${IDEMPOTENCY_KEY_HEADER} must be 1-${MAX_KEY_LENGTH} printable ASCII characters`;
    throw new ApiException(400, message, [keyDetail(message)]);
  }
  return key;
}

/**
 * JSON with the keys of every object sorted (arrays keep their order): two bodies that differ only
 * in key order or white space have the same canonical form. `undefined` (no body) → `''`.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const name of Object.keys(inner).sort()) sorted[name] = (inner as Record<string, unknown>)[name];
    return sorted;
  });
}

/**
 * The fingerprint of a request: SHA-256 (hex) of its method, its path and query (with the API
 * version it is served as: `/v2/articles`) and its canonical JSON body ({@link canonicalJson}). Two requests with one key are
 * "the same request" exactly when their fingerprints are equal.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

/** The caller as the idempotency layer sees it (see {@link callerScope}). */
export interface Caller {
  id: number;
  apiKeyId?: number;
  clientId?: string;
}

/**
 * Whose keys a request uses: an OAuth access token → the client acting for its user
 * (`oauth:<client_id>:<user id>`); an API key → the key (`key:<id>`); a bearer token or a session →
 * the user (`user:<id>`); no credential (registration) → the client address (`anon:<ip>`, see
 * docs/writes.md for why). Keys of one scope are invisible to every other.
 */
export function callerScope(caller: Caller | undefined, ip: string | undefined): string {
  if (!caller) return `anon:${ip ?? 'unknown'}`;
  if (caller.clientId) return `oauth:${caller.clientId}:${caller.id}`;
  if (caller.apiKeyId !== undefined) return `key:${caller.apiKeyId}`;
  return `user:${caller.id}`;
}

/**
 * The names of (scope, key): `digest`, the SHA-256 (hex) of both — the primary key of the record in
 * the database, so neither the caller nor the key is readable there — and `lock`, the shared-store
 * name of the lock a running first request holds (`idempotency:lock:<digest>`).
 */
export function storeKeys(scope: string, key: string): { digest: string; lock: string } {
  const digest = createHash('sha256').update(`${scope}\0${key}`).digest('hex');
  return { digest, lock: `idempotency:lock:${digest}` };
}

/** What is kept of a first response: enough to send it again byte for byte. */
export interface StoredResponse {
  /** {@link requestFingerprint} of the first request. */
  fingerprint: string;
  /** The headers that matter (`Location`, `ETag`, `Cache-Control`, `Vary`), as sent; the status is the operation's own, set again by Nest on a replay. */
  headers: Record<string, string>;
  /** The JSON body as sent, or null when there was none. */
  body: string | null;
}

/** AES-256-GCM key for the records of (scope, key): derived from the Idempotency-Key itself, which the store never holds. */
function recordCipherKey(scope: string, key: string): Buffer {
  return createHmac('sha256', key).update(`resource-api idempotency record\0${scope}`).digest();
}

/**
 * Encrypts a kept response for its record (AES-256-GCM, random 96-bit IV): the key is derived from
 * the client's Idempotency-Key, which is stored nowhere (the record's key is a hash of it), so
 * whoever reads the table — a database dump — sees no body, and no secret of a created API key or
 * OAuth client. Returns base64url of IV ‖ tag ‖ ciphertext.
 */
export function sealRecord(record: StoredResponse, scope: string, key: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', recordCipherKey(scope, key), iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url');
}

/** Decrypts what {@link sealRecord} wrote; null when it does not decrypt or parse (treated as absent). */
export function openRecord(sealed: string, scope: string, key: string): StoredResponse | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', recordCipherKey(scope, key), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as StoredResponse;
  } catch {
    return null;
  }
}

/** 422 `validation_failed`: the key was first used for another request (method, path or body differ). */
export function keyReusedForAnotherRequest(): ApiException {
  const message = `${IDEMPOTENCY_KEY_HEADER} was already used for a different request (method, path or body differ); use a new key for a new request`;
  return new ApiException(422, message, [keyDetail(message)]);
}

/** Seconds a caller is told to wait while the first request with its key is still running. */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/** 409 `conflict` with `Retry-After`: the first request with this key has not finished yet. */
export function keyInProgress(): ApiException {
  const message = `a request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry after ${IN_PROGRESS_RETRY_AFTER_SECONDS} second`;
  return new ApiException(409, message, [keyDetail(message)], { 'Retry-After': String(IN_PROGRESS_RETRY_AFTER_SECONDS) });
}
