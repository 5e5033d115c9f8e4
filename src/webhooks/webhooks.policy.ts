import { type AccessPolicy, ownedPolicy } from '../common/access/access-policy.js';
import type { WebhookSubscription } from './webhook-subscription.entity.js';

/**
 * Who may do what to webhooks (docs/webhooks.md): the owner and admins read and write a subscription and
 * its deliveries; to anyone else another user's webhook does not exist (404, not 403: a
 * subscription's URL and existence are the owner's business); a non-admin lists only its own
 * (the list query's alias is `w`).
 */
export const WEBHOOKS_POLICY: AccessPolicy<Pick<WebhookSubscription, 'owner_id'>> = ownedPolicy<Pick<WebhookSubscription, 'owner_id'>>({
  resource: 'webhook',
  ownerOf: (webhook) => webhook.owner_id,
  column: 'w.owner_id',
  hidden: true,
});
