import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { Tag } from './tag.entity.js';
import { TagsService } from './tags.service.js';

/** The tags field table (docs/lists.md#fields-filters-and-sorts-per-collection): filter `name` (and `name[prefix|contains]`, lower-cased as names are); sort `id`, `name`, `created_at`, `updated_at`. The `articles` link needs the name. */
export const TAGS_FIELDS = defineFields<Tag>()({
  alias: 'g',
  fields: {
    name: {
      column: 'name',
      sort: true,
      operators: ['prefix', 'contains'],
      filter: { type: 'string', description: 'The tag with this name (compared case-insensitively).', example: 'nestjs' },
    },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['name'],
  search: { table: 'tags', fields: ['name'] },
});

/** Tags (docs/resources/tags.md): `/v1/tags`, scopes `tags:read` and `tags:write`. */
export const TAGS = defineResource({
  name: 'tags',
  description: 'Tags for articles: everyone reads and creates, admins rename and delete.',
  scopes: true,
  entities: [Tag],
  module: () => import('./tags.module.js').then((file) => file.TagsModule),
  versioned: ['Tag'],
  fields: TAGS_FIELDS,
  listPlans: [{ name: 'tags', caller: 'user', visible: '1 = 1', index: 'idx_tags_updated_at_id', list: (app, query) => app.get(TagsService).list(query) }],
  serviceTier: (tier) => new TagsService(tier.dataSource.getRepository(Tag)),
});
