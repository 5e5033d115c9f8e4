import { Controller, Get, Param } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { servedVersion } from '../common/versioning/api-versions.js';
import { EventPayload, EventResponse } from './event-payload.response.js';
import { EVENTS_FIELDS } from './events.resource.js';
import { EventsService } from './events.service.js';
import { ParseEventIdPipe } from './parse-event-id.pipe.js';

/**
 * `/v{version}/events`, read-only (docs/events.md): the event log for catch-up and replay — the
 * caller's own events, every event for admins — cursor-paged; scope `events:read`. Each event's
 * `data` has the shape of the version serving the request. `EventPayload`, the body webhooks
 * deliver, is a component of every document.
 */
@ApiTags('events')
@ApiExtraModels(EventPayload)
@ScopedResource('events')
@Controller('events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ListOperation(EVENTS_FIELDS)
  @ApiOperation({
    summary: 'List events (own; all for admins)',
    description:
      'What changed, oldest first by default (`sort=created_at` or `id`, the position). Walk `next_cursor` to catch up; events older than the retention period (`EVENT_RETENTION_DAYS`, default 30) are gone. Each item is the webhook payload (`EventPayload`) with a `self` link.',
  })
  @ApiPageResponse(EventResponse, 'EventList')
  @ApiErrors(400, 401, 403)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<EventResponse>> {
    return this.events.list(query, caller, servedVersion());
  }

  @Get(':id')
  @ReadOperation(EVENTS_FIELDS)
  @ApiOperation({ summary: 'Read an event', description: 'Another user’s event answers 404, as a missing or pruned one.' })
  @ApiParam({
    name: 'id',
    description: 'The event id, `evt_` + 32 lower-case hex digits.',
    schema: { type: 'string', pattern: '^evt_[0-9a-f]{32}$', minLength: 36, maxLength: 36, example: 'evt_5f0c6a4e0d2b4c7e9a1f3b8d2e6c4a10' },
  })
  @ApiOkResponse({ type: EventResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseEventIdPipe) id: string, @CurrentUser() caller: AuthUser): Promise<EventResponse> {
    return this.events.findOne(id, caller, servedVersion());
  }
}
