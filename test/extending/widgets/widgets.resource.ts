import { defineFields } from '../../../src/common/list/field-table.js';
import { defineResource } from '../../../src/common/resources/define-resource.js';
import { Widgets1999000000000 } from './1999000000000-widgets.js';
import { Widget, WIDGET_COLOURS } from './widget.entity.js';

/** The widgets field table: filters `colour`, `owner`; sort `id`, `name`, `created_at`, `updated_at`. */
export const WIDGETS_FIELDS = defineFields<Widget>()({
  alias: 'w',
  fields: {
    name: { column: 'name', sort: true },
    colour: { column: 'colour', filter: { type: 'enum', values: WIDGET_COLOURS, description: 'Widgets of this colour.', example: 'red' } },
    owner: { column: 'owner_id', filter: { type: 'int', description: 'Widgets of this user id (admins; others only ever see their own).', example: 1 } },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['owner_id'],
});

/** Widgets: `/v1/widgets`, scopes `widgets:read` and `widgets:write`, versioned, two event types. */
export const WIDGETS = defineResource({
  name: 'widgets',
  description: 'Widgets, private to their owner: the throwaway resource of a test.',
  scopes: true,
  entities: [Widget],
  migrations: [Widgets1999000000000],
  module: () => import('./widgets.module.js').then((file) => file.WidgetsModule),
  events: { 'widget.created': 'a widget is created', 'widget.updated': 'a widget is changed' },
  versioned: ['Widget'],
  fields: WIDGETS_FIELDS,
});
