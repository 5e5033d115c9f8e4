import type { RESOURCES } from '../resources.js';

/** The event types a declaration lists in its `events`. */
type EventTypesOf<D> = D extends { readonly events: infer E } ? keyof E & string : never;

/**
 * An event type, `<resource>.<verb>`: one the service's declarations list in their `events`
 * (docs/events.md#event-types has the table), for the compiler — the services name theirs with
 * it. At run time the registry handed down (`RESOURCE_REGISTRY`, `eventTypes`) is the list the
 * event log's filter, the webhook subscriptions and the documents take; a test that registers a
 * resource of its own has more (a type-only import: nothing is loaded from src/resources.ts).
 */
export type EventType = EventTypesOf<(typeof RESOURCES)[number]>;
