import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { EntityManager } from 'typeorm';
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

/** Where a write leaves, on its response, the author summary it read inside its transaction (see {@link withWrittenAuthor}). */
const WRITTEN_AUTHOR = Symbol('writtenAuthor');

/**
 * Gives a write's response (an article or comment) the summary of its author as the write's
 * transaction read it, so that API v2 embeds it without another query after the commit (a write
 * builds its answer from what it wrote: docs/writes.md#concurrency). Stored under a symbol that
 * is not enumerable: JSON, spreads and the v1 answer ignore it. Returns `response`; an undefined
 * `author` leaves it as it is.
 */
export function withWrittenAuthor<T extends object>(response: T, author: UserSummary | undefined): T {
  if (author) Object.defineProperty(response, WRITTEN_AUTHOR, { value: author, enumerable: false });
  return response;
}

/** The author summary {@link withWrittenAuthor} left on `response`, else undefined (a read: the caller looks it up). */
export function writtenAuthor(response: object): UserSummary | undefined {
  return (response as { [WRITTEN_AUTHOR]?: UserSummary })[WRITTEN_AUTHOR];
}
