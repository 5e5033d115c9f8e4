import { ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';

/** `GET /health/live`: the process is up. */
@ApiSchema({ name: 'Liveness' })
export class LivenessResponse {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status: 'ok';
}

/** The result of one readiness check that passed. */
@ApiSchema({ name: 'ReadinessCheck' })
export class ReadinessCheckResponse {
  @ApiProperty({ enum: ['up'], example: 'up' })
  status: 'up';

  /** How long the check took, in milliseconds. */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, maximum: 600_000, example: 2 })
  response_time_ms: number;
}

/** `GET /health/ready` when every dependency answers. */
@ApiSchema({ name: 'Readiness' })
export class ReadinessResponse {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status: 'ok';

  /** What this process runs (ROLE): `all`, `api` (HTTP only) or `worker` (background work; probes and metrics only). */
  @ApiProperty({ enum: ['all', 'api', 'worker'], example: 'all' })
  role: 'all' | 'api' | 'worker';

  /** One entry per dependency checked (`database`, and whatever else is registered — `webhook_listener` on a worker), keyed by its name. */
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(ReadinessCheckResponse) },
    maxProperties: 32,
    example: { database: { status: 'up', response_time_ms: 2 } },
  })
  checks: Record<string, ReadinessCheckResponse>;
}
