import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Tag } from '../../src/tags/tag.entity.js';

let counter = 0;

/** Inserts a tag straight into the database (name `tag-<n>` unless given, stored as given). Returns the row. */
export async function createTag(app: INestApplication, overrides: Partial<Tag> = {}): Promise<Tag> {
  counter += 1;
  const now = new Date();
  const repo = app.get(DataSource).getRepository(Tag);
  return repo.save(repo.create({ name: `tag-${process.pid}-${counter}`, created_at: now, updated_at: now, ...overrides }));
}
