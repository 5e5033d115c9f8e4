import { errorResponse } from '../common/openapi/api-errors.decorator.js';
import { IDEMPOTENCY_KEY_HEADER, IN_PROGRESS_RETRY_AFTER_SECONDS, MAX_KEY_LENGTH, REPLAYED_HEADER } from './idempotency-key.js';
import { IDEMPOTENT } from '../common/decorators/idempotent.decorator.js';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The request header, shared through `components.parameters`. */
const KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    `Makes a retry safe (draft-ietf-httpapi-idempotency-key-header): a unique value per intended operation, e.g. a UUID v4. ` +
    `The first 2xx response is kept per caller and key for IDEMPOTENCY_TTL (default 24 h); the same key with the same request (method, path and query, JSON body) gets it again with \`${REPLAYED_HEADER}: true\` and nothing is executed twice. ` +
    `The same key with a different request → 422; while the first request runs → 409 with \`Retry-After\`. An error response is not kept: the key stays usable for a corrected request. ` +
    `1-${MAX_KEY_LENGTH} printable ASCII characters (spaces inside only: HTTP strips them around a header value), sent once, else 400.`,
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_KEY_LENGTH,
    pattern: `^[!-~]([ -~]{0,${MAX_KEY_LENGTH - 2}}[!-~])?$`,
    example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
  },
};

/** The response header of a replay, shared through `components.headers`. */
const REPLAYED = {
  description: `\`true\` when this is the stored response to an earlier request with the same \`${IDEMPOTENCY_KEY_HEADER}\` (nothing was executed again); absent otherwise.`,
  schema: { type: 'string', enum: ['true'], example: 'true' },
};

const IN_PROGRESS = `Or: a request with the same \`${IDEMPOTENCY_KEY_HEADER}\` is still running (\`Retry-After: ${IN_PROGRESS_RETRY_AFTER_SECONDS}\`).`;
const REUSED = `Or: \`${IDEMPOTENCY_KEY_HEADER}\` was already used for a different request (method, path, query or body differ).`;
const IN_PROGRESS_EXAMPLE = {
  error: `a request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry after ${IN_PROGRESS_RETRY_AFTER_SECONDS} second`,
  code: 'conflict',
  details: [
    {
      field: IDEMPOTENCY_KEY_HEADER,
      message: `a request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry after ${IN_PROGRESS_RETRY_AFTER_SECONDS} second`,
    },
  ],
  request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90',
};

/** Appends `text` to a response's description (once). */
function describe(response: Json, text: string): void {
  if (!String(response.description ?? '').includes(text)) response.description = `${response.description ?? ''} ${text}`.trim();
}

/**
 * Documents `Idempotency-Key` on every operation marked `Idempotent()` (the extension is removed):
 * the optional header parameter, `Idempotent-Replayed` on its 2xx responses, a 409 with
 * `Retry-After` (first request still running) and a 422 (key reused for another request), added to
 * or described in the operation's own 409/422. Run by completeDocument before its shared headers
 * (`X-Request-Id`, …) are added to every response.
 */
export function documentIdempotency(doc: Json): void {
  doc.components ??= {};
  let used = false;
  for (const pathItem of Object.values<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation: Json | undefined = pathItem[method];
      if (!operation?.[IDEMPOTENT]) continue;
      delete operation[IDEMPOTENT];
      used = true;
      const responses: Json = (operation.responses = structuredClone(operation.responses ?? {}));
      operation.parameters = [...(operation.parameters ?? []), { $ref: `#/components/parameters/${IDEMPOTENCY_KEY_HEADER}` }];
      for (const [status, response] of Object.entries<Json>(responses)) {
        if (Number(status) >= 200 && Number(status) < 300)
          response.headers = { ...response.headers, [REPLAYED_HEADER]: { $ref: `#/components/headers/${REPLAYED_HEADER}` } };
      }
      if (!responses['409']) {
        responses['409'] = errorResponse(409);
        responses['409'].description = IN_PROGRESS.replace(/^Or: a/, 'A');
        responses['409'].content['application/json'].example = structuredClone(IN_PROGRESS_EXAMPLE);
      } else describe(responses['409'], IN_PROGRESS);
      responses['409'].headers = { ...responses['409'].headers, 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
      responses['422'] ??= errorResponse(422);
      describe(responses['422'], REUSED);
    }
  }
  if (!used) return;
  doc.components.parameters = { ...doc.components.parameters, [IDEMPOTENCY_KEY_HEADER]: KEY_PARAMETER };
  doc.components.headers = { ...doc.components.headers, [REPLAYED_HEADER]: REPLAYED };
}
