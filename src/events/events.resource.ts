import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { EventRecord } from './event.entity.js';
import { Events1764500000000 } from '../database/migrations/1764500000000-events.js';
import { EventTraceContext1764520000000 } from '../database/migrations/1764520000000-event-trace-context.js';
import { registeredList } from '../common/resources/resource-registry.js';

/**
 * The events field table (docs/events.md): filter `type`, ranges on `created_at`, sort `id` (the
 * position) and `created_at` (`id` the tie-breaker). An item is the whole payload, built from
 * columns that are always selected; `fields` takes `id` and `type` (`created_at` is the payload's
 * `timestamp`, so it filters and sorts but is not a `fields` name).
 */
export const EVENTS_FIELDS = defineFields<EventRecord>()({
  alias: 'e',
  fields: {
    type: { column: 'type', filter: { type: 'enum', values: registeredList('eventTypes'), description: 'Events of this type.', example: 'todo.created' } },
    created_at: { column: 'created_at', select: false, range: 'timestamp', sort: true },
  },
  links: ['event_id', 'type', 'owner_id', 'resource_id', 'created_at', 'data_v1', 'data_v2'],
});

/** The event log (docs/events.md): `/v1/events`, read-only, scope `events:read`. */
export const EVENTS = defineResource({
  name: 'events',
  description: 'The event log: what changed, for catch-up and replay (own events; admins see all). Read-only.',
  scopes: true,
  readOnly: true,
  entities: [EventRecord],
  migrations: [Events1764500000000, EventTraceContext1764520000000],
  module: () => import('./events.module.js').then((file) => file.EventsModule),
  fields: EVENTS_FIELDS,
});
