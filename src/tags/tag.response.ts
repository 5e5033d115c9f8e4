import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { linkPrefix } from '../common/versioning/api-versions.js';
import { type ExpandDef, rowsWhereIn } from '../common/expand/expansion.js';
import type { Tag } from './tag.entity.js';

/** A tag as the API returns it (docs/resources/tags.md). */
@ApiSchema({ name: 'Tag' })
export class TagResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  /** Lower-case, 1-50 of a-z, 0-9 and `-`. */
  @ApiProperty({ example: 'nestjs' })
  name: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  /** `self` and `articles` (the articles carrying this tag). */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/tags/1' },
      { rel: 'articles', href: '/v{version}/articles?tag=nestjs' },
    ],
  })
  links: Link[];
}

/** Maps a tags row (entity or raw select; `name` is always selected) to {@link TagResponse}. */
export function toTagResponse(source: Row<Tag, 'name'>): TagResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  const name = row.name as string;
  return {
    id,
    name,
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/tags/${id}` },
      { rel: 'articles', href: `${prefix}/articles?tag=${encodeURIComponent(name)}` },
    ],
  };
}

/**
 * The expandable path `tags` of articles (docs/lists.md#expanding-related-resources-expand): each
 * item's tag names become the tags' representations ({@link TagResponse}, in the same order),
 * read in one statement for the whole page. Every caller may read every tag.
 */
export const TAG_OBJECTS: ExpandDef = {
  expand: async (items, { dataSource }) => {
    const names = [...new Set(items.flatMap((item) => (Array.isArray(item.tags) ? item.tags.filter((name): name is string => typeof name === 'string') : [])))];
    if (names.length === 0) return;
    const rows = await rowsWhereIn<Row<Tag, 'name'>>(dataSource, 'tags', ['id', 'name', 'created_at', 'updated_at'], 'name', names);
    const byName = new Map(rows.map((row) => [row.name, toTagResponse(row)]));
    for (const item of items)
      if (Array.isArray(item.tags)) item.tags = item.tags.map((name: unknown) => (typeof name === 'string' ? (byName.get(name) ?? name) : name));
  },
};
