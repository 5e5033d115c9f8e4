import { ownedPolicy } from '../common/access/access-policy.js';
import type { EventRecord } from './event.entity.js';

/**
 * Who sees which events (docs/events.md, visibility): a user the events whose `owner_id` is their
 * own id, an admin every event (including those with no owner, such as `user.deleted` of another
 * account). Events are read-only. Another user's event is answered 404 like a missing one (its
 * existence is not revealed: the policy is `hidden`); the list query's alias is `e`.
 */
export const EVENTS_POLICY = ownedPolicy<Pick<EventRecord, 'owner_id'>>({
  resource: 'event',
  ownerOf: (event) => event.owner_id ?? 0,
  column: 'e.owner_id',
  hidden: true,
});
