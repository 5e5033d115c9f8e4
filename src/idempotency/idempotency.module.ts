import { Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IdempotencyRecords } from './idempotency-records.js';

/**
 * `Idempotency-Key` on the operations marked `@Idempotent()` (docs/writes.md#retrying-safely-idempotency-key):
 * the records in the database (pruned once expired) and the {@link IdempotencyInterceptor} that
 * replays them. It uses the shared store (the key's lock), so it sits above `common/`. The
 * interceptor is exported, not registered here: the application plugs it into the shared pipeline
 * (`CommonModule.forRoot`), which places it between the refusal of a body sent to an operation
 * that takes none and the ResourceInterceptor.
 */
@Module({
  providers: [IdempotencyRecords, IdempotencyInterceptor],
  exports: [IdempotencyRecords, IdempotencyInterceptor],
})
export class IdempotencyModule {}
