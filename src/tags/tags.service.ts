import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, Repository } from 'typeorm';
import { conflict, notFound, validationFailed } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { Article } from '../articles/article.entity.js';
import { insertRow } from '../database/insert-row.js';
import { bumpVersions, deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { type Tagged, tagged, versionCondition, type WritePreconditions } from '../common/writes/preconditions.js';
import type { CreateTagDto, UpdateTagDto } from './dto/create-tag.dto.js';
import { Tag } from './tag.entity.js';
import { toTagResponse, type TagResponse } from './tag.response.js';
import { TAGS_FIELDS } from './tags.resource.js';

/**
 * Tags (docs/resources/tags.md): names are stored lower-case and unique. The only holder of the tags
 * repository; articles resolve tag names through {@link TagsService.requireIds}.
 */
@Injectable()
export class TagsService {
  constructor(@InjectRepository(Tag) private readonly tags: Repository<Tag>) {}

  /**
   * Creates a tag (the DTO has lower-cased the name already) in one INSERT; the answer is the row
   * written (every column is set here, the id comes from the INSERT), nothing is read back.
   * @throws 409 `conflict` when the name is taken (checked first; the unique index decides a race).
   */
  async create(dto: CreateTagDto): Promise<Tagged<TagResponse>> {
    await this.assertFree(dto.name);
    const now = new Date();
    const row = { name: dto.name, created_at: now, updated_at: now, version: 1 };
    return tagged(toTagResponse({ ...row, id: await insertRow(this.tags, row) }), row.version);
  }

  /** One page of tags; the `name` filter and its `prefix` are compared lower-case, as names are stored (every caller sees every tag). */
  list(query: ListQuery): Promise<Page<TagResponse>> {
    if (query.filters.name) query.filters.name = query.filters.name.map((name) => String(name).toLowerCase());
    query.operators = query.operators.map((filter) =>
      filter.field === 'name' && filter.op === 'prefix' ? { ...filter, value: filter.value.toLowerCase() } : filter,
    );
    return findPage(this.tags, query, TAGS_FIELDS, toTagResponse);
  }

  /**
   * Reads one tag.
   * @throws 404 when it does not exist.
   */
  async findOne(id: number): Promise<Tagged<TagResponse>> {
    const tag = await this.load(id);
    return tagged(toTagResponse(tag), tag.version);
  }

  /**
   * Renames a tag (PUT and PATCH; admins only, checked by the controller). An omitted name on
   * PATCH changes nothing but `updated_at`; the tag's own name is not a conflict. A new name
   * changes the representation of the articles carrying the tag: their versions are bumped in the
   * same transaction (so their entity tags change).
   * @throws 404 when missing; 409 when another tag has the name; 412/428 (`If-Match`, see updateVersioned).
   */
  async rename(id: number, dto: UpdateTagDto, preconditions?: WritePreconditions): Promise<Tagged<TagResponse>> {
    return this.tags.manager.transaction(async (manager) => {
      const current = await this.load(id, manager);
      // If-Match before the content is checked (RFC 9110 §13.2.1); evaluated again by the UPDATE
      versionCondition(preconditions, 'tag', id, current.version);
      if (dto.name !== undefined && dto.name !== current.name) await this.assertFree(dto.name, manager);
      const patch: Partial<Tag> = { updated_at: new Date() };
      if (dto.name !== undefined) patch.name = dto.name;
      const version = await updateVersioned(manager, Tag, { id }, current.version, preconditions, patch, 'tag', id);
      if (patch.name !== undefined && patch.name !== current.name) await this.bumpArticles(manager, id, patch.updated_at!);
      return tagged(toTagResponse({ ...current, ...patch, version }), version);
    });
  }

  /**
   * Deletes a tag in one conditional DELETE; articles lose it (the join rows cascade), so their
   * versions are bumped first, in the same transaction. @throws 404; 412/428 (`If-Match`)
   */
  async remove(id: number, preconditions?: WritePreconditions): Promise<void> {
    await this.tags.manager.transaction(async (manager) => {
      const current = await this.load(id, manager);
      versionCondition(preconditions, 'tag', id, current.version);
      await this.bumpArticles(manager, id, new Date());
      await deleteVersioned(manager, Tag, { id }, current.version, preconditions, 'tag', id);
    });
  }

  /**
   * Bumps the version of every article carrying tag `id` (its names are part of their
   * representation) and sets their `updated_at` to `at`, so change sync returns them again.
   */
  private bumpArticles(manager: EntityManager, id: number, at: Date): Promise<void> {
    return bumpVersions(manager, Article, 'id IN (SELECT article_id FROM article_tags WHERE tag_id = :tagId)', { tagId: id }, at);
  }

  /**
   * Resolves tag names (lower-case) to the ids of the distinct names, in order of first mention,
   * inside the caller's transaction when `manager` is given (docs/resources/articles.md#tags: an
   * array of existing tag names; duplicates collapse).
   * @throws 422 `validation_failed` with one detail per unknown name, at its first index (`tags[i]`).
   */
  async requireIds(names: readonly string[], manager?: EntityManager): Promise<number[]> {
    const distinct = [...new Set(names)];
    if (distinct.length === 0) return [];
    const repo = manager ? manager.getRepository(Tag) : this.tags;
    const rows = await repo.find({ select: { id: true, name: true }, where: { name: In(distinct) } });
    const ids = new Map(rows.map((row) => [row.name, row.id]));
    const unknown = distinct.filter((name) => !ids.has(name)).map((name) => ({ field: `tags[${names.indexOf(name)}]`, message: `tag ${name} does not exist` }));
    if (unknown.length > 0) throw validationFailed(unknown);
    return distinct.map((name) => ids.get(name)!);
  }

  private async assertFree(name: string, manager?: EntityManager): Promise<void> {
    if (await (manager ?? this.tags.manager).exists(Tag, { where: { name } })) throw conflict(`tag name ${name} is already taken`);
  }

  private async load(id: number, manager?: EntityManager): Promise<Tag> {
    const row = await (manager ?? this.tags.manager).findOne(Tag, { where: { id } });
    if (!row) throw notFound('tag', id);
    return row;
  }
}
