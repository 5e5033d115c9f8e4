import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/** Metadata key read by the IdempotencyInterceptor; also the OpenAPI extension documentIdempotency reads (and removes). */
export const IDEMPOTENT = 'x-idempotent';

/**
 * Marks an operation that honours `Idempotency-Key` (docs/writes.md "Retrying safely"): every
 * creating POST (through `CreateOperation()`) and the PATCH of an order. The IdempotencyInterceptor
 * stores the first 2xx response per caller and key and replays it; the document gets the header
 * parameter, `Idempotent-Replayed` and the 409/422 of the mechanism.
 */
export const Idempotent = () => applyDecorators(SetMetadata(IDEMPOTENT, true), ApiExtension(IDEMPOTENT, true));
