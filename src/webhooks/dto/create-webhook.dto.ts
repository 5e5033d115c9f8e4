import { ApiHideProperty, ApiProperty, ApiSchema, PartialType } from '@nestjs/swagger';
import { ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsOmittable, ReadOnlyProperty } from '../../common/decorators/validation.decorators.js';
import { ArrayMaxRegistered, IsRegistered } from '../../common/resources/registered-values.js';
import { registeredCount, registeredList } from '../../common/resources/resource-registry.js';
import { WEBHOOK_API_VERSIONS, type WebhookApiVersion } from '../webhook-subscription.entity.js';

/** What `events` may list: the event types (the registry's), or `*` for all of them (now and later ones); for the documents (registeredList). */
export const WEBHOOK_EVENT_CHOICES = registeredList('eventTypes', '*');

/** Longest accepted `url`. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Body of `POST /v1/webhooks` (docs/webhooks.md#subscriptions--v1webhooks-and-v2webhooks). `url` must be https (http only with
 * WEBHOOK_ALLOW_HTTP=true) and resolve to public addresses only (unless
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true): a refused url → 422 naming `url`. The read-only fields of
 * a GET (`owner`, `disabled_reason`, …) are accepted and ignored; `secret` is not accepted (400).
 */
@ApiSchema({ name: 'CreateWebhookBody' })
export class CreateWebhookDto {
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare owner?: never;

  @ReadOnlyProperty()
  @ApiHideProperty()
  declare disabled_reason?: never;

  @ReadOnlyProperty()
  @ApiHideProperty()
  declare consecutive_failures?: never;

  @ReadOnlyProperty()
  @ApiHideProperty()
  declare previous_secret_expires_at?: never;

  /** Where deliveries are POSTed: an absolute https URL without credentials or fragment, at most 2048 characters. */
  @ApiProperty({ example: 'https://hooks.example.com/resource-api', maxLength: MAX_WEBHOOK_URL_LENGTH, format: 'uri' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  url: string;

  /** Event types to receive, at least one, each once; `*` = every type. */
  @ApiProperty({
    type: [String],
    enum: WEBHOOK_EVENT_CHOICES,
    maxItems: registeredCount('eventTypes', 1),
    example: ['todo.created', 'todo.updated'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxRegistered('eventTypes', ['*'])
  @ArrayUnique()
  @IsString({ each: true })
  @IsRegistered('eventTypes', 'event', { each: true, also: ['*'] })
  events: string[];

  /** Free text for the owner, up to 500 characters; null when absent. */
  @ApiProperty({ type: 'string', required: false, nullable: true, example: 'todo sync for the mobile app' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  /** The shape of `data` in deliveries: the resource as API v1 (default) or v2 shows it. */
  @ApiProperty({ required: false, enum: WEBHOOK_API_VERSIONS, default: '1', example: '1' })
  @IsOmittable()
  @IsString()
  @IsIn(WEBHOOK_API_VERSIONS)
  api_version?: WebhookApiVersion;

  /** Whether events are delivered (default true). Enabling clears `disabled_reason` and the failure count. */
  @ApiProperty({ required: false, default: true, example: true })
  @IsOmittable()
  @IsBoolean()
  enabled?: boolean;
}

/** Body of `PATCH /v1/webhooks/{id}`: any subset (`url`, `events`, `description`, `api_version`, `enabled`); `null` clears `description`. */
@ApiSchema({ name: 'UpdateWebhookBody' })
export class UpdateWebhookDto extends PartialType(CreateWebhookDto, { skipNullProperties: false }) {}

/** Body of `POST /v1/webhooks/{id}/redeliveries`: the delivery whose event is sent again. */
@ApiSchema({ name: 'CreateRedeliveryBody' })
export class CreateRedeliveryDto {
  /** Id of a delivery of this webhook (from `GET /v{version}/webhooks/{id}/deliveries`). */
  @ApiProperty({ type: 'integer', example: 7 })
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  delivery_id: number;
}
