import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { authorize } from '../common/access/access-policy.js';
import type { Row } from '../common/list/field-table.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { type ApiVersion, linkPrefix } from '../common/versioning/api-versions.js';
import { EventRecord } from './event.entity.js';
import { toEventPayload } from './event-outbox.js';
import type { EventResponse } from './event-payload.response.js';
import { EVENTS_FIELDS } from './events.resource.js';
import { EVENTS_POLICY } from './events.policy.js';

/** An events row (raw select or entity) as `GET /v{version}/events` shows it: the payload of `version` and its `self` link. */
export function toEventResponse(
  row: Row<EventRecord, 'event_id' | 'type' | 'owner_id' | 'resource_id' | 'created_at' | 'data_v1' | 'data_v2'>,
  version: ApiVersion,
): EventResponse {
  const payload = toEventPayload(row as unknown as EventRecord, version);
  return { ...payload, links: [{ rel: 'self', href: `${linkPrefix()}/events/${payload.id}` }] };
}

/**
 * The event log as callers read it (docs/events.md): a user sees the events they own, an admin
 * every event; another user's event is a 404 like a missing one. The only reader of the events
 * repository besides the outbox (writes) and the retention job (deletes).
 */
@Injectable()
export class EventsService {
  constructor(@InjectRepository(EventRecord) private readonly events: Repository<EventRecord>) {}

  /** One page of the events the caller may see, each `data` in the shape of `version`; filters apply within that. */
  list(query: ListQuery, caller: AuthUser, version: ApiVersion): Promise<Page<EventResponse>> {
    return findPage(this.events, query, EVENTS_FIELDS, (row) => toEventResponse(row, version), EVENTS_POLICY.visible(caller));
  }

  /**
   * Event `eventId` (`evt_…`, already checked for shape) in the shape of `version`.
   * @throws 404 when missing, pruned, or another user's (the caller is no admin)
   */
  async findOne(eventId: string, caller: AuthUser, version: ApiVersion): Promise<EventResponse> {
    return toEventResponse(authorize(EVENTS_POLICY, 'read', caller, await this.events.findOne({ where: { event_id: eventId } }), eventId), version);
  }
}
