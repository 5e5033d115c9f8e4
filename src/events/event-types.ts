/**
 * Every event type, `<resource>.<verb>` (the event log and webhooks; docs/events.md has the table).
 * `article.published`: an article's status moved to `published`; `order.updated`: a pending order's
 * items or currency changed; `order.paid`, `.shipped`, `.delivered`, `.cancelled`: its status moves;
 * `user.deleted`: the deletion of an account.
 */
export const EVENT_TYPES = [
  'todo.created',
  'todo.updated',
  'todo.deleted',
  'article.created',
  'article.updated',
  'article.published',
  'article.deleted',
  'comment.created',
  'comment.updated',
  'comment.deleted',
  'order.created',
  'order.updated',
  'order.paid',
  'order.shipped',
  'order.delivered',
  'order.cancelled',
  'order.deleted',
  'user.deleted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
