import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { linkPrefix } from '../common/versioning/api-versions.js';
import { WEBHOOK_EVENT_CHOICES } from './dto/create-webhook.dto.js';
import { DELIVERY_STATUSES, type DeliveryStatus, type WebhookDelivery } from './webhook-delivery.entity.js';
import { WEBHOOK_API_VERSIONS, type WebhookApiVersion, type WebhookSubscription } from './webhook-subscription.entity.js';

/** A webhook subscription as the API returns it (docs/webhooks.md#subscriptions--v1webhooks-and-v2webhooks): never its secret. */
@ApiSchema({ name: 'Webhook' })
export class WebhookResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ example: 'https://hooks.example.com/resource-api', format: 'uri' })
  url: string;

  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_CHOICES, example: ['todo.created', 'todo.updated'] })
  events: string[];

  @ApiProperty({ type: 'string', nullable: true, example: 'todo sync for the mobile app' })
  description: string | null;

  /** The shape of `data` in its deliveries. */
  @ApiProperty({ enum: WEBHOOK_API_VERSIONS, example: '1' })
  api_version: WebhookApiVersion;

  /** False after a 410, after WEBHOOK_DISABLE_AFTER_FAILURES failed deliveries in a row, or when its owner disabled it. */
  @ApiProperty({ example: true })
  enabled: boolean;

  /** Why the service disabled it (null when enabled or disabled by its owner). */
  @ApiProperty({ type: 'string', nullable: true, readOnly: true, example: null })
  disabled_reason: string | null;

  /** Deliveries in a row that failed after their last attempt. */
  @ApiProperty({ readOnly: true, type: 'integer', example: 0 })
  consecutive_failures: number;

  /** Until when the previous secret still signs deliveries after a rotation (null: no rotation in grace). */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, readOnly: true, example: null })
  previous_secret_expires_at: string | null;

  /** Id of the owning user. */
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  owner: number;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  /** `self`, `owner`, `deliveries`. */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/webhooks/1' },
      { rel: 'owner', href: '/v{version}/users/1' },
      { rel: 'deliveries', href: '/v{version}/webhooks/1/deliveries' },
    ],
  })
  links: Link[];
}

/** The response of `POST /v1/webhooks` and of a secret rotation: the webhook with its signing secret, shown this once. */
@ApiSchema({ name: 'CreatedWebhook' })
export class CreatedWebhookResponse extends WebhookResponse {
  /** The signing secret (`whsec_` + base64 of 24 random bytes, Standard Webhooks). Shown only in this response; store it now. */
  @ApiProperty({ readOnly: true, example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  secret: string;
}

/** A delivery of one event to one webhook, with its attempts (docs/webhooks.md#deliveries-and-redelivery). */
@ApiSchema({ name: 'WebhookDelivery' })
export class WebhookDeliveryResponse {
  @ApiProperty({ readOnly: true, example: 7, type: 'integer' })
  id: number;

  /** Id of the webhook. */
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  webhook: number;

  /** The event's id: the `webhook-id` header of every attempt (and of redeliveries). */
  @ApiProperty({ readOnly: true, example: 'evt_2b7c1f0e9a4d4c3b8e6f5a4b3c2d1e0f' })
  event_id: string;

  @ApiProperty({ readOnly: true, example: 'todo.created' })
  event_type: string;

  /** `pending` (next attempt due at `next_attempt_at`), `delivering`, `delivered` (a 2xx), `failed` (410, the webhook disabled, or every attempt used). */
  @ApiProperty({ enum: DELIVERY_STATUSES, readOnly: true, example: 'delivered' })
  status: DeliveryStatus;

  /** Attempts made so far. */
  @ApiProperty({ readOnly: true, type: 'integer', example: 1 })
  attempts: number;

  /** When the next attempt is due (pending only). */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, readOnly: true, example: null })
  next_attempt_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, readOnly: true, example: '2026-11-21T10:15:00.250Z' })
  last_attempt_at: string | null;

  /** The HTTP status of the last response (null: none, e.g. a timeout). */
  @ApiProperty({ type: 'integer', nullable: true, readOnly: true, example: 200 })
  last_status_code: number | null;

  /** Why the last attempt failed: `HTTP 500`, `timeout after 10000 ms`, `connection refused (ECONNREFUSED)`, a refused url… */
  @ApiProperty({ type: 'string', nullable: true, readOnly: true, example: null })
  last_error: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, readOnly: true, example: '2026-11-21T10:15:00.250Z' })
  delivered_at: string | null;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  /** `self` and `webhook`. */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/webhooks/1/deliveries/7' },
      { rel: 'webhook', href: '/v{version}/webhooks/1' },
    ],
  })
  links: Link[];
}

/** Parses the stored `events` (a JSON array); `[]` for anything else. */
export function parseEvents(stored: unknown): string[] {
  try {
    const value: unknown = JSON.parse(String(stored));
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}

/** Maps a webhook_subscriptions row (entity or raw select; its links need `owner_id`) to {@link WebhookResponse}; never the secrets. */
export function toWebhookResponse(source: Row<WebhookSubscription, 'owner_id'>): WebhookResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const owner = Number(row.owner_id);
  const prefix = linkPrefix();
  const graceUntil = row.previous_secret_expires_at;
  return {
    id,
    url: row.url as string,
    events: row.events === undefined ? (undefined as unknown as string[]) : parseEvents(row.events),
    description: row.description as string | null,
    api_version: row.api_version as WebhookApiVersion,
    enabled: row.enabled === undefined ? (undefined as unknown as boolean) : Boolean(row.enabled),
    disabled_reason: row.disabled_reason as string | null,
    consecutive_failures: row.consecutive_failures === undefined ? (undefined as unknown as number) : Number(row.consecutive_failures),
    previous_secret_expires_at:
      graceUntil === undefined
        ? (undefined as unknown as null)
        : graceUntil !== null && new Date(toIso(graceUntil) as string).getTime() > Date.now()
          ? (toIso(graceUntil) as string)
          : null,
    owner,
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/webhooks/${id}` },
      { rel: 'owner', href: `${prefix}/users/${owner}` },
      { rel: 'deliveries', href: `${prefix}/webhooks/${id}/deliveries` },
    ],
  };
}

/** Maps a webhook_deliveries row (its links need `subscription_id`) to {@link WebhookDeliveryResponse}. */
export function toDeliveryResponse(source: Row<WebhookDelivery, 'subscription_id' | 'status'>): WebhookDeliveryResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const webhook = Number(row.subscription_id);
  const prefix = linkPrefix();
  const status = row.status as DeliveryStatus;
  const num = (value: unknown) => (value === undefined ? undefined : value === null ? null : Number(value));
  return {
    id,
    webhook,
    event_id: row.event_id as string,
    event_type: row.event_type as string,
    status,
    attempts: num(row.attempts) as number,
    // while delivering, next_attempt_at holds the lease's end: not an attempt the caller should expect
    next_attempt_at: row.next_attempt_at === undefined ? (undefined as unknown as null) : status === 'pending' ? (toIso(row.next_attempt_at) ?? null) : null,
    last_attempt_at: toIso(row.last_attempt_at) as string | null,
    last_status_code: num(row.last_status_code) as number | null,
    last_error: row.last_error as string | null,
    delivered_at: toIso(row.delivered_at) as string | null,
    created_at: toIso(row.created_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/webhooks/${webhook}/deliveries/${id}` },
      { rel: 'webhook', href: `${prefix}/webhooks/${webhook}` },
    ],
  };
}
