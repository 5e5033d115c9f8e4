import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Article, ArticleTag } from '../../src/articles/article.entity.js';
import type { Tag } from '../../src/tags/tag.entity.js';

let counter = 0;

/**
 * Inserts an article straight into the database (a draft titled `Article <n>` with an empty body
 * unless overridden; `published_at` set to `created_at` for a published one unless given), linked
 * to `tags`. Returns the row.
 */
export async function createArticle(app: INestApplication, author: { id: number }, overrides: Partial<Article> = {}, tags: Tag[] = []): Promise<Article> {
  counter += 1;
  const at = overrides.created_at ?? new Date();
  const dataSource = app.get(DataSource);
  const repo = dataSource.getRepository(Article);
  const status = overrides.status ?? 'draft';
  const saved = await repo.save(
    repo.create({
      title: `Article ${counter}`,
      body: '',
      status,
      author_id: author.id,
      published_at: status === 'published' ? at : null,
      created_at: at,
      updated_at: at,
      ...overrides,
    }),
  );
  if (tags.length > 0) await dataSource.getRepository(ArticleTag).insert(tags.map((tag) => ({ article_id: saved.id, tag_id: tag.id })));
  return saved;
}
