import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { AuthUser } from '../../../src/common/caller/auth-user.js';
import { authorize, ownedPolicy } from '../../../src/common/access/access-policy.js';
import { findPage } from '../../../src/common/list/find-page.js';
import type { ListQuery } from '../../../src/common/list/list-query.js';
import type { Page } from '../../../src/common/list/page.js';
import { updateVersioned } from '../../../src/common/writes/conditional-write.js';
import { type Tagged, tagged, type WritePreconditions } from '../../../src/common/writes/preconditions.js';
import { insertRow } from '../../../src/database/insert-row.js';
import { inBothVersions } from '../../../src/events/event-data.js';
import { EventOutbox } from '../../../src/events/event-outbox.js';
import type { EventType } from '../../../src/events/event-types.js';
import type { CreateWidgetDto, UpdateWidgetDto } from './dto/create-widget.dto.js';
import { Widget } from './widget.entity.js';
import { toWidgetResponse, type WidgetResponse } from './widget.response.js';
import { WIDGETS_FIELDS } from './widgets.resource.js';

/** Private to their owner; admins see all (the list's alias is `w`). */
export const WIDGETS_POLICY = ownedPolicy<Pick<Widget, 'owner_id'>>({ resource: 'widget', ownerOf: (widget) => widget.owner_id, column: 'w.owner_id' });

/**
 * Widgets: create (`widget.created`), list, read, change (`widget.updated`, `If-Match`). `EventType`
 * is the service's declarations' types for the compiler; the widgets' are registered at run time only.
 */
@Injectable()
export class WidgetsService {
  constructor(
    @InjectRepository(Widget) private readonly widgets: Repository<Widget>,
    private readonly outbox: EventOutbox,
  ) {}

  /** Creates a widget owned by the caller, with its `widget.created` event. */
  async create(dto: CreateWidgetDto, caller: AuthUser): Promise<Tagged<WidgetResponse>> {
    const now = new Date();
    const row = { name: dto.name, colour: dto.colour, owner_id: caller.id, created_at: now, updated_at: now, version: 1 };
    const widget = await this.widgets.manager.transaction(async (manager) => {
      const created: Widget = { ...row, id: await insertRow(manager.getRepository(Widget), row) };
      await this.outbox.append(manager, {
        type: 'widget.created' as EventType,
        ownerId: created.owner_id,
        resourceId: created.id,
        data: inBothVersions(() => toWidgetResponse(created)),
      });
      return created;
    });
    return tagged(toWidgetResponse(widget), widget.version);
  }

  /** One page of the caller's widgets (all for an admin). */
  list(query: ListQuery, caller: AuthUser): Promise<Page<WidgetResponse>> {
    return findPage(this.widgets, query, WIDGETS_FIELDS, toWidgetResponse, WIDGETS_POLICY.visible(caller));
  }

  /** One widget. @throws 404, 403 */
  async findOne(id: number, caller: AuthUser): Promise<Tagged<WidgetResponse>> {
    const widget = authorize(WIDGETS_POLICY, 'read', caller, await this.widgets.findOne({ where: { id } }), id);
    return tagged(toWidgetResponse(widget), widget.version);
  }

  /** PATCH: one conditional UPDATE (the request's `If-Match`) and `widget.updated`. @throws 403, 404, 412, 428 */
  async update(id: number, dto: UpdateWidgetDto, caller: AuthUser, preconditions: WritePreconditions): Promise<Tagged<WidgetResponse>> {
    const current = authorize(WIDGETS_POLICY, 'write', caller, await this.widgets.findOne({ where: { id } }), id);
    const patch: Partial<Widget> = {
      ...(dto.name !== undefined && { name: dto.name }),
      ...(dto.colour !== undefined && { colour: dto.colour }),
      updated_at: new Date(),
    };
    const next = { ...current, ...patch };
    await this.widgets.manager.transaction(async (manager) => {
      next.version = await updateVersioned(manager, Widget, { id }, current.version, preconditions, patch, 'widget', id);
      await this.outbox.append(manager, {
        type: 'widget.updated' as EventType,
        ownerId: next.owner_id,
        resourceId: id,
        data: inBothVersions(() => toWidgetResponse(next)),
      });
    });
    return tagged(toWidgetResponse(next), next.version);
  }
}
