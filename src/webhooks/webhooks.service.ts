import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { authorize } from '../common/access/access-policy.js';
import { conflict, notFound, validationFailed } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { type Tagged, tagged, type WritePreconditions } from '../common/writes/preconditions.js';
import type { Env } from '../config/env.validation.js';
import { insertRow } from '../database/insert-row.js';
import type { CreateRedeliveryDto, CreateWebhookDto, UpdateWebhookDto } from './dto/create-webhook.dto.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';
import { parseWebhookUrl, resolveWebhookHost, UrlRefusal, type UrlRules } from './webhook-url.js';
import { type CreatedWebhookResponse, toDeliveryResponse, toWebhookResponse, type WebhookDeliveryResponse, type WebhookResponse } from './webhook.response.js';
import { WebhookWorker } from './webhook-worker.js';
import { DELIVERIES_FIELDS, WEBHOOKS_FIELDS } from './webhooks.resource.js';
import { WEBHOOKS_POLICY } from './webhooks.policy.js';

/** A new signing secret: `whsec_` + base64 of 24 random bytes (the Standard Webhooks format). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** `events` as stored: the JSON array, `["*"]` alone when `*` is among them. */
function storedEvents(events: readonly string[]): string {
  return JSON.stringify(events.includes('*') ? ['*'] : [...events]);
}

/**
 * Webhook subscriptions and their deliveries (docs/webhooks.md). A user manages its own; an admin all.
 * Another user's webhook is answered as missing (404).
 */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectRepository(WebhookSubscription) private readonly subscriptions: Repository<WebhookSubscription>,
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    private readonly config: ConfigService<Env, true>,
    private readonly worker: WebhookWorker,
  ) {}

  private get rules(): UrlRules {
    return {
      allowHttp: this.config.get('WEBHOOK_ALLOW_HTTP', { infer: true }),
      allowPrivateNetworks: this.config.get('WEBHOOK_ALLOW_PRIVATE_NETWORKS', { infer: true }),
    };
  }

  /**
   * Checks a webhook URL (form, scheme, credentials, and every address its host resolves to) and
   * returns it as given. @throws 422 `validation_failed` naming `url`
   */
  async checkUrl(url: string): Promise<string> {
    try {
      await resolveWebhookHost(parseWebhookUrl(url, this.rules), this.rules);
    } catch (error) {
      if (error instanceof UrlRefusal) throw validationFailed([{ field: 'url', message: error.message }]);
      throw error;
    }
    return url;
  }

  /**
   * Creates a subscription owned by the caller, enabled unless `enabled: false`, and returns it
   * with its secret, shown this once. @throws 422 for a refused url
   */
  async create(dto: CreateWebhookDto, caller: AuthUser): Promise<Tagged<CreatedWebhookResponse>> {
    const url = await this.checkUrl(dto.url);
    const now = new Date();
    const secret = newWebhookSecret();
    const row = {
      owner_id: caller.id,
      url,
      events: storedEvents(dto.events),
      description: dto.description ?? null,
      enabled: dto.enabled ?? true,
      api_version: dto.api_version ?? '1',
      secret,
      previous_secret: null,
      previous_secret_expires_at: null,
      consecutive_failures: 0,
      disabled_reason: null,
      created_at: now,
      updated_at: now,
      version: 1,
    } satisfies Omit<WebhookSubscription, 'id'>;
    const id = await insertRow(this.subscriptions, row);
    return tagged({ ...toWebhookResponse({ ...row, id }), secret }, row.version);
  }

  /** One page of the caller's webhooks (every webhook for an admin). */
  list(query: ListQuery, caller: AuthUser): Promise<Page<WebhookResponse>> {
    return findPage(this.subscriptions, query, WEBHOOKS_FIELDS, toWebhookResponse, WEBHOOKS_POLICY.visible(caller));
  }

  /** Reads one webhook (no secret). @throws 404 when missing or another user's */
  async findOne(id: number, caller: AuthUser): Promise<Tagged<WebhookResponse>> {
    const subscription = await this.load(id, caller);
    return tagged(toWebhookResponse(subscription), subscription.version);
  }

  /**
   * PATCH: changes the fields sent (`null` clears `description`). Enabling a webhook clears its
   * `disabled_reason` and failure count. @throws 404; 412/428 (`If-Match`); 422 for a refused url
   */
  async update(id: number, dto: UpdateWebhookDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<WebhookResponse>> {
    const current = await this.load(id, caller);
    const patch: Partial<WebhookSubscription> = {};
    if (dto.url !== undefined) patch.url = await this.checkUrl(dto.url);
    if (dto.events !== undefined) patch.events = storedEvents(dto.events);
    if (dto.description !== undefined) patch.description = dto.description;
    if (dto.api_version !== undefined) patch.api_version = dto.api_version;
    if (dto.enabled !== undefined) {
      patch.enabled = dto.enabled;
      if (dto.enabled) Object.assign(patch, { consecutive_failures: 0, disabled_reason: null });
    }
    const next = { ...current, ...patch, updated_at: new Date() };
    next.version = await updateVersioned(
      this.subscriptions.manager,
      WebhookSubscription,
      { id },
      current.version,
      preconditions,
      { ...patch, updated_at: next.updated_at },
      'webhook',
      id,
    );
    if (patch.enabled) this.worker.wake();
    return tagged(toWebhookResponse(next), next.version);
  }

  /** Deletes a webhook with its deliveries. @throws 404; 412/428 (`If-Match`) */
  async remove(id: number, caller: AuthUser, preconditions?: WritePreconditions): Promise<void> {
    const current = await this.load(id, caller);
    await deleteVersioned(this.subscriptions.manager, WebhookSubscription, { id }, current.version, preconditions, 'webhook', id);
  }

  /**
   * Rotates the signing secret: a new one (returned, shown this once) signs from now on; the
   * current one becomes the previous secret, still signing (beside the new one) for
   * WEBHOOK_SECRET_GRACE_SECONDS. A secret still in an earlier grace period is dropped.
   * One conditional UPDATE on the version read: of concurrent rotations one wins, the others 409.
   * With `If-Match` (`preconditions`), the rotation happens only on the tagged version, as a PUT would.
   * @throws 404; 409 when the webhook changed meanwhile; 412/428 (`If-Match`)
   */
  async rotateSecret(id: number, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<CreatedWebhookResponse>> {
    const current = await this.load(id, caller);
    const now = new Date();
    const graceSeconds = this.config.get('WEBHOOK_SECRET_GRACE_SECONDS', { infer: true });
    const secret = newWebhookSecret();
    const patch = {
      secret,
      previous_secret: graceSeconds > 0 ? current.secret : null,
      previous_secret_expires_at: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null,
      updated_at: now,
    };
    const version = await updateVersioned(
      this.subscriptions.manager,
      WebhookSubscription,
      { id, version: current.version },
      current.version,
      preconditions,
      patch,
      'webhook',
      id,
      () => conflict(`webhook ${id} changed while its secret was rotated; retry`),
    );
    return tagged({ ...toWebhookResponse({ ...current, ...patch, version }), secret }, version);
  }

  /** One page of a webhook's deliveries, newest last by default (`sort=-id` for newest first). @throws 404 */
  async listDeliveries(id: number, query: ListQuery, caller: AuthUser): Promise<Page<WebhookDeliveryResponse>> {
    await this.load(id, caller, 'read');
    return findPage(
      { repository: this.deliveries, where: 'd.subscription_id = :webhook', params: { webhook: id } },
      query,
      DELIVERIES_FIELDS,
      toDeliveryResponse,
    );
  }

  /** One delivery of a webhook. @throws 404 when the webhook or the delivery (of that webhook) is missing */
  async findDelivery(id: number, deliveryId: number, caller: AuthUser): Promise<WebhookDeliveryResponse> {
    await this.load(id, caller, 'read');
    const delivery = await this.deliveries.findOne({ where: { id: deliveryId, subscription_id: id } });
    if (!delivery) throw notFound('delivery', deliveryId);
    return toDeliveryResponse(delivery);
  }

  /**
   * Asks for a redelivery of the event of delivery `dto.delivery_id`: a new delivery of the same
   * event (same `webhook-id`) to this webhook, due now, with a fresh attempt schedule.
   * @throws 404 when the webhook or the delivery (of that webhook) is missing; 409 when the webhook
   *   is disabled, or a delivery of that event to it is still pending or delivering
   */
  async redeliver(id: number, dto: CreateRedeliveryDto, caller: AuthUser): Promise<WebhookDeliveryResponse> {
    const webhook = await this.load(id, caller);
    const original = await this.deliveries.findOne({ where: { id: dto.delivery_id, subscription_id: id } });
    if (!original) throw notFound('delivery', dto.delivery_id);
    if (!webhook.enabled) throw conflict(`webhook ${id} is disabled; enable it before asking for a redelivery`);
    const open = await this.deliveries
      .createQueryBuilder('d')
      .where('d.subscription_id = :id AND d.event_id = :event AND d.status IN (:...open)', { id, event: original.event_id, open: ['pending', 'delivering'] })
      .getOne();
    if (open) throw conflict(`delivery ${open.id} of event ${original.event_id} is still ${open.status}`);
    const now = new Date();
    const row = {
      subscription_id: id,
      event_id: original.event_id,
      event_type: original.event_type,
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: now,
      lease_expires_at: null,
      claim_token: null,
      last_status_code: null,
      last_error: null,
      last_attempt_at: null,
      delivered_at: null,
      created_at: now,
    };
    const deliveryId = await insertRow(this.deliveries, row);
    this.worker.wake();
    return toDeliveryResponse({ ...row, id: deliveryId });
  }

  /**
   * The webhook `id` if the caller may `action` it ({@link WEBHOOKS_POLICY}, hidden: another user's
   * is answered as missing, so a non-admin learns nothing of it). @throws 404
   */
  private async load(id: number, caller: AuthUser, action: 'read' | 'write' = 'write'): Promise<WebhookSubscription> {
    return authorize(WEBHOOKS_POLICY, action, caller, await this.subscriptions.findOne({ where: { id } }), id);
  }
}
