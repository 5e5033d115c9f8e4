import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { injectTraceContext } from '../observability/tracing/trace-context.js';
import { parseWebhookUrl, pinnedLookup, resolveWebhookHost, type Resolver, systemResolver, UrlRefusal, type UrlRules } from './webhook-url.js';

/** The service's version from its package.json (found upwards from this file, in src/ or dist/src/). */
function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'resource-api' && manifest.version) return manifest.version;
    } catch {
      // no package.json here: look one folder up
    }
    dir = path.dirname(dir);
  }
  return '0.0.0';
}

/** `User-Agent` of every delivery: `resource-api-webhooks/<package version>`. */
export const WEBHOOK_USER_AGENT = `resource-api-webhooks/${packageVersion()}`;

/**
 * The `webhook-signature` header value (Standard Webhooks): `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` for each secret (`whsec_…`), space-separated — the current secret
 * first, then the previous one while its rotation's grace period lasts.
 */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
}

/** One delivery attempt to make. */
export interface AttemptRequest {
  url: string;
  /** `webhook-id`: the event id, the same for every attempt and redelivery of the event. */
  id: string;
  /** The JSON body (the event payload). */
  body: string;
  /** Signing secrets, current first. */
  secrets: readonly string[];
  /** Milliseconds the whole attempt may take (resolution, connection, request, response headers). */
  timeoutMs: number;
  rules: UrlRules;
}

/** What an attempt came to: `delivered` (2xx), `gone` (410), or a failure with a short reason. */
export type AttemptOutcome =
  { result: 'delivered'; statusCode: number } | { result: 'gone'; statusCode: 410 } | { result: 'failed'; statusCode: number | null; error: string };

/** Short, secret-free words for a network error code. */
function describeNetworkError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ETIMEDOUT: 'connection timed out',
    EPIPE: 'connection closed',
    CERT_HAS_EXPIRED: 'TLS certificate expired',
    DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate self-signed',
    SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate not trusted',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
    ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
  };
  if (typeof code === 'string') return known[code] ? `${known[code]} (${code})` : `request failed (${code.slice(0, 40)})`;
  return 'request failed';
}

/**
 * Makes one delivery attempt (docs/webhooks.md#delivery, Standard Webhooks): checks the URL again and resolves its
 * host (the SSRF rules hold at delivery time, DNS may have changed), then POSTs `body` to one of
 * the checked addresses (never re-resolved: no DNS rebinding) with `webhook-id`,
 * `webhook-timestamp` (seconds), `webhook-signature`, `Content-Type: application/json`, the
 * {@link WEBHOOK_USER_AGENT} and `traceparent` when tracing is on. Redirects are not followed
 * (a 3xx is a failure). The whole attempt is bounded by `timeoutMs`; `signal` aborts it (shutdown).
 * A 2xx → delivered; 410 → gone; anything else, a timeout or a network error → failed with a short
 * reason that never contains the URL, a secret or the response body. Never throws.
 */
export async function sendAttempt(attempt: AttemptRequest, signal?: AbortSignal, resolver: Resolver = systemResolver): Promise<AttemptOutcome> {
  const started = Date.now();
  let url: URL;
  let addresses;
  try {
    url = parseWebhookUrl(attempt.url, attempt.rules);
    addresses = await resolveWebhookHost(url, attempt.rules, resolver);
  } catch (error) {
    return { result: 'failed', statusCode: null, error: error instanceof UrlRefusal ? `refused: ${error.message}` : 'url could not be checked' };
  }
  const remaining = attempt.timeoutMs - (Date.now() - started);
  if (remaining <= 0) return { result: 'failed', statusCode: null, error: `timeout after ${attempt.timeoutMs} ms` };
  const at = new Date();
  const headers = injectTraceContext<Record<string, string>>({
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': attempt.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatureHeader(attempt.secrets, attempt.id, at, attempt.body),
    'content-length': String(Buffer.byteLength(attempt.body)),
  });
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const request = client.request(url, { method: 'POST', headers, lookup: pinnedLookup(addresses), agent: false });
    const timer = setTimeout(() => {
      finish({ result: 'failed', statusCode: null, error: `timeout after ${attempt.timeoutMs} ms` });
      request.destroy();
    }, remaining);
    const onAbort = () => {
      finish({ result: 'failed', statusCode: null, error: 'aborted by shutdown' });
      request.destroy();
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    request.on('response', (response) => {
      const statusCode = response.statusCode ?? 0;
      // the body is not needed: read and discard it so the socket can close
      response.on('error', () => undefined);
      response.resume();
      if (statusCode >= 200 && statusCode < 300) finish({ result: 'delivered', statusCode });
      else if (statusCode === 410) finish({ result: 'gone', statusCode: 410 });
      else if (statusCode >= 300 && statusCode < 400) finish({ result: 'failed', statusCode, error: `HTTP ${statusCode} (redirects are not followed)` });
      else finish({ result: 'failed', statusCode, error: `HTTP ${statusCode}` });
    });
    request.on('error', (error) => finish({ result: 'failed', statusCode: null, error: describeNetworkError(error) }));
    request.end(attempt.body);
  });
}
