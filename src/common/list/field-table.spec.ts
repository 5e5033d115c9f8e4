import { describe, expect, it } from '@jest/globals';
import type { Repository } from 'typeorm';
import { defineFields, type Row } from './field-table.js';
import { findPage } from './find-page.js';
import { parseListQuery, type ListQuery } from './list-query.js';

/** A related entity, to check that relation properties are no columns. */
class Owner {
  id: number;
}

/** The entity of a throwaway resource. */
class Widget {
  id: number;
  title: string;
  status: 'open' | 'closed';
  owner_id: number;
  owner?: Owner;
  weight: number | null;
  created_at: Date;
}

const WIDGETS = defineFields<Widget>()({
  alias: 'w',
  fields: {
    title: { column: 'title', sort: true },
    parts: { column: null },
    status: { column: 'status', sort: true, filter: { type: 'enum', values: ['open', 'closed'], description: 'Widgets in this status.', example: 'open' } },
    owner: { column: 'owner_id', filter: { type: 'int', description: 'Widgets of this user id.', example: 1 } },
    heavy: {
      column: null,
      select: false,
      filter: { type: 'string', condition: (param) => `w.weight IN (:...${param})`, description: 'Heavy widgets.', example: 'yes' },
    },
    created_at: { column: 'created_at', sort: true },
  },
  links: ['owner_id'],
});

describe('defineFields: one entry per field, the grammar derived', () => {
  it('sorts by id first, then the sortable entries in table order, each on alias.column', () => {
    expect(WIDGETS.sortable).toEqual({ id: 'w.id', title: 'w.title', status: 'w.status', created_at: 'w.created_at' });
    expect(Object.keys(WIDGETS.sortable)).toEqual(['id', 'title', 'status', 'created_at']);
  });

  it('filters on the entry’s column, or with the entry’s own condition when it has no column', () => {
    expect(Object.keys(WIDGETS.filters)).toEqual(['status', 'owner', 'heavy']);
    expect(WIDGETS.filters.status).toEqual({
      type: 'enum',
      values: ['open', 'closed'],
      column: 'w.status',
      description: 'Widgets in this status.',
      example: 'open',
    });
    expect(WIDGETS.filters.owner).toEqual({ type: 'int', column: 'w.owner_id', description: 'Widgets of this user id.', example: 1 });
    expect(WIDGETS.filters.heavy.column).toBeUndefined();
    expect(WIDGETS.filters.heavy.condition?.('p')).toBe('w.weight IN (:...p)');
  });

  it('selects every entry but the filter-only ones, a column-less field selecting no column', () => {
    expect(WIDGETS.selectable).toEqual(['title', 'parts', 'status', 'owner', 'created_at']);
    expect(WIDGETS.columns).toEqual({ title: ['title'], parts: [], status: ['status'], owner: ['owner_id'], created_at: ['created_at'] });
  });

  it('always selects the link columns', () => {
    expect(WIDGETS.always).toEqual(['owner_id']);
    expect(WIDGETS.alias).toBe('w');
  });

  it('is what the list grammar reads: sort keys, filters and fields of the table, nothing else', () => {
    expect(parseListQuery({ sort: '-status', status: 'open', owner: ['1', '2'], fields: 'parts,title' }, WIDGETS)).toMatchObject({
      sort: [
        { field: 'status', column: 'w.status', direction: 'DESC' },
        { field: 'id', column: 'w.id', direction: 'DESC' },
      ],
      filters: { status: ['open'], owner: [1, 2] },
      fields: ['parts', 'title'],
    });
    expect(() => parseListQuery({ sort: 'owner' }, WIDGETS)).toThrow('cannot sort by owner; sortable: id, title, status, created_at');
    expect(() => parseListQuery({ fields: 'heavy' }, WIDGETS)).toThrow('unknown field heavy; allowed: id, title, parts, status, owner, created_at');
    expect(() => parseListQuery({ weight: '3' }, WIDGETS)).toThrow('unknown query parameter weight');
  });

  it('documents sort keys and filters in the order given by `order`, which must name exactly the sortable and filter entries', () => {
    const reordered = defineFields<Widget>()({
      alias: 'w',
      fields: {
        title: { column: 'title', sort: true },
        created_at: { column: 'created_at', sort: true, filter: { type: 'string', description: 'd', example: 'x' } },
        status: { column: 'status', filter: { type: 'string', description: 'd', example: 'x' } },
      },
      links: [],
      order: { sort: ['created_at', 'title'], filters: ['status', 'created_at'] },
    });
    expect(Object.keys(reordered.sortable)).toEqual(['id', 'created_at', 'title']);
    expect(Object.keys(reordered.filters)).toEqual(['status', 'created_at']);
    expect(reordered.selectable).toEqual(['title', 'created_at', 'status']);
    expect(() =>
      defineFields<Widget>()({
        alias: 'w',
        fields: { title: { column: 'title', sort: true }, status: { column: 'status', sort: true } },
        links: [],
        order: { sort: ['title'] },
      }),
    ).toThrow('field table: order.sort must name exactly title, status (got title)');
    expect(() => defineFields<Widget>()({ alias: 'w', fields: { title: { column: 'title' } }, links: [], order: { filters: ['title'] } })).toThrow(
      'order.filters must name exactly nothing',
    );
  });
});

/**
 * Compile-time checks (`npm run typecheck` fails when a `@ts-expect-error` line compiles): a
 * field table is checked against its entity, and a mapper against the columns the table selects.
 * Never called.
 */
export function typeChecks(qb: Repository<Widget>, query: ListQuery): void {
  defineFields<Widget>()({
    alias: 'w',
    fields: {
      // @ts-expect-error a column that is no property of the entity (a typo)
      title: { column: 'titel' },
      // @ts-expect-error a relation property is no column
      owner: { column: 'owner' },
      // @ts-expect-error a field without a column cannot sort
      parts: { column: null, sort: true },
      // @ts-expect-error an enum filter needs its values
      status: { column: 'status', filter: { type: 'enum', description: 'd', example: 'open' } },
      // @ts-expect-error a filter without a column needs its own condition
      heavy: { column: null, select: false, filter: { type: 'string', description: 'd', example: 'x' } },
    },
    // @ts-expect-error a link column that is no column of the entity
    links: ['ownerid'],
  });
  // @ts-expect-error `order` may name only entries of the table
  defineFields<Widget>()({ alias: 'w', fields: { title: { column: 'title', sort: true } }, links: [], order: { sort: ['titel'] } });

  /** A mapper whose links need `owner_id`. */
  const toWidget = (row: Row<Widget, 'owner_id'>) => ({ id: row.id, owner: Number(row.owner_id) });
  void findPage(qb, query, WIDGETS, toWidget);
  const withoutLinks = defineFields<Widget>()({ alias: 'w', fields: { title: { column: 'title' } }, links: [] });
  // @ts-expect-error the table does not select the owner column the mapper's links need (it would build `/users/NaN`)
  void findPage(qb, query, withoutLinks, toWidget);
  // @ts-expect-error a table of another entity
  void findPage(qb as unknown as Repository<Owner>, query, WIDGETS, toWidget);
  // @ts-expect-error a mapper reads only columns of the entity
  void findPage(qb, query, WIDGETS, (row) => row.weigth);
}
