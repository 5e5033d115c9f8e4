import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Comment } from '../../src/comments/comment.entity.js';

let counter = 0;

/** Inserts a comment by `author` on `article` straight into the database (any article status). Returns the row. */
export async function createComment(
  app: INestApplication,
  article: { id: number },
  author: { id: number },
  overrides: Partial<Comment> = {},
): Promise<Comment> {
  counter += 1;
  const at = overrides.created_at ?? new Date();
  const repo = app.get(DataSource).getRepository(Comment);
  return repo.save(repo.create({ body: `Comment ${counter}`, article_id: article.id, author_id: author.id, created_at: at, updated_at: at, ...overrides }));
}
