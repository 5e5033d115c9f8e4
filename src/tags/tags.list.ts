import type { ListSpec } from '../common/list/list-query.js';

/** The tags list grammar (SPEC §6): filter `name`; sort `id`, `name`, `created_at`. */
export const TAGS_LIST: ListSpec = {
  resource: 'tag',
  sortable: { id: 'g.id', name: 'g.name', created_at: 'g.created_at' },
  filters: {
    name: { type: 'string', column: 'g.name', description: 'The tag with this name (compared case-insensitively).', example: 'nestjs' },
  },
  fields: ['name', 'created_at', 'updated_at'],
  alias: 'g',
  columns: { name: ['name'], created_at: ['created_at'], updated_at: ['updated_at'] },
  always: ['name'],
};
