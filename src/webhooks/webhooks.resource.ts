import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { DELIVERY_STATUSES, WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';
import { Webhooks1764510000000 } from '../database/migrations/1764510000000-webhooks.js';

/** The webhooks field table: filter `owner`; sort `id`, `created_at`. */
export const WEBHOOKS_FIELDS = defineFields<WebhookSubscription>()({
  alias: 'w',
  fields: {
    url: { column: 'url' },
    events: { column: 'events' },
    description: { column: 'description' },
    api_version: { column: 'api_version' },
    enabled: { column: 'enabled' },
    disabled_reason: { column: 'disabled_reason' },
    consecutive_failures: { column: 'consecutive_failures' },
    previous_secret_expires_at: { column: 'previous_secret_expires_at' },
    owner: { column: 'owner_id', filter: { type: 'int', description: 'Webhooks of this user id (admins; others only ever see their own).', example: 1 } },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at' },
  },
  links: ['owner_id'],
});

/** The deliveries field table (`GET /v1/webhooks/{id}/deliveries`): filter `status`; sort `id`, `created_at`. */
export const DELIVERIES_FIELDS = defineFields<WebhookDelivery>()({
  alias: 'd',
  fields: {
    webhook: { column: 'subscription_id' },
    event_id: { column: 'event_id' },
    event_type: { column: 'event_type' },
    status: { column: 'status', filter: { type: 'enum', values: DELIVERY_STATUSES, description: 'Deliveries in this status.', example: 'failed' } },
    attempts: { column: 'attempts' },
    next_attempt_at: { column: 'next_attempt_at' },
    last_attempt_at: { column: 'last_attempt_at' },
    last_status_code: { column: 'last_status_code' },
    last_error: { column: 'last_error' },
    delivered_at: { column: 'delivered_at' },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
  },
  links: ['subscription_id', 'status'],
});

/** Webhook subscriptions (docs/webhooks.md#subscriptions--v1webhooks-and-v2webhooks): `/v1/webhooks`, scopes `webhooks:read` and `webhooks:write` (which cover their deliveries too). */
export const WEBHOOKS = defineResource({
  name: 'webhooks',
  description: 'Signed webhook subscriptions to the events of what the caller owns (admins: all events); secret rotation.',
  scopes: true,
  scopeNoun: 'webhook subscriptions and their deliveries',
  entities: [WebhookSubscription],
  migrations: [Webhooks1764510000000],
  module: () => import('./webhooks.module.js').then((file) => file.WebhooksModule),
  fields: WEBHOOKS_FIELDS,
});

/**
 * A webhook's deliveries (docs/webhooks.md#deliveries-and-redelivery): `/v1/webhooks/{id}/deliveries` and redeliveries, readable and
 * changeable by whoever may read and change the webhook; API keys need the `webhooks` scopes.
 */
export const WEBHOOK_DELIVERIES = defineResource({
  name: 'webhook-deliveries',
  description:
    'The deliveries of a webhook (status, attempts, last response, next attempt) and redelivery of an event; scopes webhooks:read and webhooks:write.',
  scopes: false,
  entities: [WebhookDelivery],
  module: () => import('./webhooks.module.js').then((file) => file.WebhooksModule),
  fields: DELIVERIES_FIELDS,
});
