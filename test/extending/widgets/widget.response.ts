import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../../../src/common/list/field-table.js';
import type { Link } from '../../../src/common/list/page.js';
import { toIso } from '../../../src/common/list/timestamps.js';
import { LinkDto } from '../../../src/common/openapi/link.dto.js';
import { linkPrefix } from '../../../src/common/versioning/api-versions.js';
import { type Widget, WIDGET_COLOURS, type WidgetColour } from './widget.entity.js';

/** A widget as the API returns it. */
@ApiSchema({ name: 'Widget' })
export class WidgetResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ example: 'Sprocket' })
  name: string;

  @ApiProperty({ enum: WIDGET_COLOURS, example: 'red' })
  colour: WidgetColour;

  @ApiProperty({ readOnly: true, example: 1, type: 'integer', description: 'Id of the owning user.' })
  owner: number;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  @ApiProperty({ type: [LinkDto], readOnly: true, example: [{ rel: 'self', href: '/v{version}/widgets/1' }] })
  links: Link[];
}

/** Maps a widgets row to {@link WidgetResponse}, with the entity tag of its version (the `ETag`). */
export function toWidgetResponse(source: Row<Widget, 'owner_id'>): WidgetResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  return {
    id,
    name: row.name as string,
    colour: row.colour as WidgetColour,
    owner: Number(row.owner_id),
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [{ rel: 'self', href: `${linkPrefix()}/widgets/${id}` }],
  };
}
