import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Link } from '../common/list/page.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { registeredList } from '../common/resources/resource-registry.js';
import type { EventType } from './event-types.js';

/**
 * An event as webhooks deliver it and `GET /v{version}/events` lists it (docs/events.md):
 * `{id, type, timestamp, data}`, `data` being the resource as this API version showed it when the
 * event was written.
 */
@ApiSchema({ name: 'EventPayload' })
export class EventPayload {
  /** The event's unique id (`evt_` + 32 hex digits); a webhook delivery's `webhook-id`. Consumers use it to drop duplicates. */
  @ApiProperty({ readOnly: true, example: 'evt_5f0c6a4e0d2b4c7e9a1f3b8d2e6c4a10', pattern: '^evt_[0-9a-f]{32}$' })
  id: string;

  @ApiProperty({ readOnly: true, enum: registeredList('eventTypes'), example: 'todo.created' })
  type: EventType;

  /** When the change was written, ISO 8601 UTC with milliseconds. */
  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  timestamp: string;

  /**
   * The resource as `GET` in this API version showed it right after the change (for a deletion:
   * as it was before), with its links: `todo.*` → `Todo`, `article.*` → `Article`, `comment.*` →
   * `Comment`, `order.*` → `Order`, `user.deleted` → `User`.
   */
  @ApiProperty({
    readOnly: true,
    type: 'object',
    additionalProperties: true,
    example: {
      id: 1,
      title: 'Buy milk',
      content: null,
      status: 'pending',
      owner: 1,
      created_at: '2026-11-21T10:15:00.000Z',
      updated_at: '2026-11-21T10:15:00.000Z',
      links: [
        { rel: 'self', href: '/v{version}/todos/1' },
        { rel: 'owner', href: '/v{version}/users/1' },
      ],
    },
  })
  data: object;
}

/** An event in the event log (`GET /v{version}/events`): the {@link EventPayload} plus its `self` link. */
@ApiSchema({ name: 'Event' })
export class EventResponse extends EventPayload {
  /** `self`. */
  @ApiProperty({ type: [LinkDto], readOnly: true, example: [{ rel: 'self', href: '/v{version}/events/evt_5f0c6a4e0d2b4c7e9a1f3b8d2e6c4a10' }] })
  links: Link[];
}
