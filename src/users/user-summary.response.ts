import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { EntityManager } from 'typeorm';
import { type ExpandDef, referencedIds, replaceReferences, rowsWhereIn } from '../common/expand/expansion.js';
import { Tagged } from '../common/writes/preconditions.js';
import { User } from './user.entity.js';

/**
 * The public face of a user, embedded where API v2 names an author (docs/versioning.md#what-changed-in-v2: v2's breaking
 * change): id, username and display name — never e-mail, age or role.
 */
@ApiSchema({ name: 'UserSummary' })
export class UserSummary {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ readOnly: true, example: 'ada_l' })
  username: string;

  @ApiProperty({ readOnly: true, example: 'Ada Lovelace' })
  name: string;
}

/** `T` with its `author` id replaced by the author's {@link UserSummary}. */
export type WithAuthor<T extends { author: number }> = Omit<T, 'author'> & { author: UserSummary };

/**
 * Replaces each item's `author` id by the author's summary from `authors` (UsersService.summaries).
 * An item whose author is missing — deleted, with their articles and comments, between the two
 * queries — is left out, as it no longer exists either.
 */
export function embedAuthors<T extends { author: number }>(items: T[], authors: Map<number, UserSummary>): WithAuthor<T>[] {
  return items.flatMap((item) => {
    const author = authors.get(item.author);
    return author ? [{ ...item, author }] : [];
  });
}

/**
 * The summary of user `id` read through `manager` (inside a write's transaction, for the v2 shape
 * of an event's article or comment); undefined when there is no such user.
 */
export async function summaryIn(manager: EntityManager, id: number): Promise<UserSummary | undefined> {
  const row = await manager.findOne(User, { where: { id }, select: { id: true, username: true, name: true } });
  return row ? { id: row.id, username: row.username, name: row.name } : undefined;
}

/**
 * A write's answer (an article or comment, tagged with its version) with the summary of its author
 * as the write's transaction read it, so that API v2 embeds it without another query after the
 * commit (a write builds its answer from what it wrote: docs/writes.md#concurrency). The v1
 * answer is the tagged representation as it is; `author` is undefined when the author was gone.
 */
export class Authored<T> extends Tagged<T> {
  constructor(
    body: T,
    entityTag: string | undefined,
    readonly author: UserSummary | undefined,
  ) {
    super(body, entityTag);
  }
}

/** `answer` with the `author` its write read ({@link Authored}). */
export function authored<T>(answer: Tagged<T>, author: UserSummary | undefined): Authored<T> {
  return new Authored(answer.body, answer.entityTag, author);
}

/**
 * The expandable path whose item field `field` holds a user id (an article's or comment's
 * `author`, a todo's `owner`, an order's `user`; docs/lists.md#expanding-related-resources-expand):
 * the ids become the users' {@link UserSummary}s — the public face every reader of the item may
 * see, as API v2 embeds it — read in one statement for the whole page. A field already holding a
 * summary (v2's `author`) is left as it is.
 */
export function userReference(field: string): ExpandDef {
  return {
    expand: async (items, { dataSource }) => {
      const ids = referencedIds(items, field);
      if (ids.length === 0) return;
      const rows = await rowsWhereIn<{ id: number | string; username: string; name: string }>(dataSource, 'users', ['id', 'username', 'name'], 'id', ids);
      replaceReferences(
        items,
        field,
        new Map(rows.map((row) => [Number(row.id), { id: Number(row.id), username: row.username, name: row.name } satisfies UserSummary])),
      );
    },
  };
}
