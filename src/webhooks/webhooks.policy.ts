import type { AccessPolicy, AccessRule } from '../common/access/access-policy.js';
import { isOwnerOrAdmin } from '../common/access/access-policy.js';
import type { WebhookSubscription } from './webhook-subscription.entity.js';

const owned: AccessRule<Pick<WebhookSubscription, 'owner_id'>> = {
  allows: (caller, row) => isOwnerOrAdmin(caller, row.owner_id),
  // not reached through WebhooksService: it loads another user's webhook as missing (404)
  refusal: (_row, id) => `webhook ${id} not found`,
};

/**
 * Who may do what to webhooks (SPEC §11): the owner and admins read and write a subscription and
 * its deliveries; to anyone else another user's webhook does not exist (404, not 403: a
 * subscription's URL and existence are the owner's business); a non-admin lists only its own
 * (the list query's alias is `w`).
 */
export const WEBHOOKS_POLICY: AccessPolicy<Pick<WebhookSubscription, 'owner_id'>> = {
  resource: 'webhook',
  rules: { read: owned, write: owned },
  visible: (caller) => (caller.role === 'admin' ? undefined : [{ 'w.owner_id': caller.id }]),
};
