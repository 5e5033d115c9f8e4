import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, type EntityManager, Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { authorize, authorizeTransition } from '../common/access/access-policy.js';
import type { Row } from '../common/list/field-table.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import { Page } from '../common/list/page.js';
import { notFound } from '../common/errors/api-exception.js';
import { deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { type Tagged, tagged, versionCondition, type WritePreconditions } from '../common/writes/preconditions.js';
import { inBothVersions } from '../events/event-data.js';
import { EventOutbox } from '../events/event-outbox.js';
import type { EventType } from '../events/event-types.js';
import { TagsService } from '../tags/tags.service.js';
import { type Authored, authored, summaryIn, type UserSummary } from '../users/user-summary.response.js';
import { Article, ArticleTag, type ArticleStatus } from './article.entity.js';
import { toArticleResponse, type ArticleResponse } from './article.response.js';
import { ARTICLES_FIELDS } from './articles.resource.js';
import { ARTICLES_POLICY } from './articles.policy.js';
import type { CreateArticleDto, UpdateArticleDto } from './dto/create-article.dto.js';

/** The editable fields of an article after defaults are applied (PUT) or as sent (PATCH). */
interface ArticleChanges {
  title?: string;
  body?: string;
  status?: ArticleStatus;
  tags?: string[];
}

/** An article as a transaction reads it: its row, its tag names (sorted) and its author's summary. */
interface ArticleState {
  row: Row<Article, 'author_id'>;
  tags: string[];
  author: UserSummary | undefined;
}

/**
 * Articles (docs/resources/articles.md): visibility by status, writes by author or admin, status
 * transitions, tags by name. The only holder of the articles and article_tags repositories;
 * comments check articles through {@link ArticlesService.requireReadable}. A write that touches
 * the article and its tag links runs in one transaction, with its events (docs/events.md):
 * `article.created`; `article.updated` for a change, plus `article.published` when the status
 * moves to `published` (both, in that order, for an update that publishes; created as published:
 * `article.created` then `article.published`); `article.deleted`.
 */
@Injectable()
export class ArticlesService {
  private findOneQuery?: string;

  constructor(
    @InjectRepository(Article) private readonly articles: Repository<Article>,
    private readonly dataSource: DataSource,
    private readonly tags: TagsService,
    private readonly outbox: EventOutbox,
  ) {}

  /**
   * Creates an article by the caller: `body` defaults to `""`, `status` to `draft`, `tags` to `[]`;
   * created as `published`, it gets `published_at` now. The answer is the article as the
   * transaction read it back before committing (with its author's summary for v2): nothing is
   * read after the commit.
   * @throws 422 for an unknown tag name (nothing is written).
   */
  async create(dto: CreateArticleDto, caller: AuthUser): Promise<Authored<ArticleResponse>> {
    const { id, state } = await this.dataSource.transaction(async (manager) => {
      const tagIds = await this.tags.requireIds(dto.tags ?? [], manager);
      const now = new Date();
      const status = dto.status ?? 'draft';
      const result = await manager.insert(Article, {
        title: dto.title,
        body: dto.body ?? '',
        status,
        author_id: caller.id,
        published_at: status === 'published' ? now : null,
        created_at: now,
        updated_at: now,
      });
      const articleId = Number(result.identifiers[0].id);
      await this.linkTags(manager, articleId, tagIds);
      const written = await this.readIn(manager, articleId);
      await this.emit(manager, articleId, written, status === 'published' ? ['article.created', 'article.published'] : ['article.created']);
      return { id: articleId, state: written };
    });
    return this.respond(state, id);
  }

  /**
   * One page of the articles the caller may read (published ones and their own; all for an
   * admin); filters apply within that, so they never widen it. The page's tag names come with its
   * rows, in the same statement (a correlated subquery per row, served by the `article_tags`
   * primary key), unless `fields` leaves `tags` out.
   */
  async list(query: ListQuery, caller: AuthUser): Promise<Page<ArticleResponse>> {
    if (query.filters.tag) query.filters.tag = query.filters.tag.map((name) => String(name).toLowerCase());
    query.operators = query.operators.map((filter) =>
      filter.field === 'tag' && filter.op === 'in' ? { ...filter, value: filter.value.map((name) => String(name).toLowerCase()) } : filter,
    );
    const withTags = !query.fields || query.fields.includes('tags');
    const page = await findPage(
      this.articles,
      query,
      ARTICLES_FIELDS,
      (row) => row as Row<Article, 'author_id'> & { tag_names?: string | null },
      ARTICLES_POLICY.visible(caller),
      {
        select: withTags ? { tag_names: this.tagNamesSql() } : undefined,
      },
    );
    return page.map((row) => toArticleResponse(row, withTags ? splitTagNames(row.tag_names) : undefined));
  }

  /**
   * Reads one article.
   * @throws 404 when missing; 403 when it is a draft or archived and the caller is neither its
   *   author nor an admin.
   */
  async findOne(id: number, caller: AuthUser): Promise<Tagged<ArticleResponse>> {
    const [article] = await this.articles.query<Array<ArticleRow>>(this.findOneSql(), [id]);
    authorize(ARTICLES_POLICY, 'read', caller, article && { status: article.status as ArticleStatus, author_id: Number(article.author_id) }, id);
    return tagged(toArticleResponse(article, splitTagNames(article.tag_names)), article.version);
  }

  /**
   * The SQL of {@link findOne}, written by TypeORM's query builder once, on first use: the
   * article's columns and its tag names in one row (`tag_names`, the list's subquery — a join
   * would repeat the article's body once per tag: three times the SQLite time of one row); the id
   * is its only parameter.
   */
  private findOneSql(): string {
    if (this.findOneQuery === undefined) {
      const qb = this.articles.createQueryBuilder('a').select('a.id', 'id');
      for (const column of ['title', 'body', 'status', 'author_id', 'published_at', 'created_at', 'updated_at', 'version']) qb.addSelect(`a.${column}`, column);
      qb.addSelect(this.tagNamesSql(), 'tag_names').where(`a.id = ${qb.connection.driver.createParameter('id', 0)}`);
      this.findOneQuery = qb.getQuery();
    }
    return this.findOneQuery;
  }

  /**
   * The article `id` if the caller may read it, for nested resources (comments): a
   * missing article is 404 and an unreadable one 403, as for the article (docs/resources/comments.md#permissions).
   * @throws 404 when missing; 403 when unreadable.
   */
  async requireReadable(id: number, caller: AuthUser): Promise<Article> {
    return authorize(ARTICLES_POLICY, 'read', caller, await this.articles.findOne({ where: { id } }), id);
  }

  /**
   * PUT: replaces the article; omitted `body` → `""`, `status` → `draft`, `tags` → `[]` (docs/writes.md#put-replace).
   * An omitted status on an archived article is therefore a refused transition.
   * @throws 403, 404, 409 (transition), 412/428 (`If-Match`), 422 (unknown tag)
   */
  replace(id: number, dto: CreateArticleDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Authored<ArticleResponse>> {
    return this.apply(id, { title: dto.title, body: dto.body ?? '', status: dto.status ?? 'draft', tags: dto.tags ?? [] }, caller, preconditions);
  }

  /** PATCH: changes only the fields sent. @throws 403, 404, 409 (transition), 412/428 (`If-Match`), 422 (unknown tag) */
  update(id: number, dto: UpdateArticleDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Authored<ArticleResponse>> {
    return this.apply(id, dto, caller, preconditions);
  }

  /**
   * Deletes an article with its tag links and comments (foreign-key cascade): the access check on
   * the loaded row, then one conditional DELETE, so of concurrent deletes exactly one succeeds.
   * @throws 403; 404 when missing or deleted meanwhile; 412/428 (`If-Match`)
   */
  async remove(id: number, caller: AuthUser, preconditions?: WritePreconditions): Promise<void> {
    const current = authorize(ARTICLES_POLICY, 'write', caller, await this.articles.findOne({ where: { id } }), id);
    await this.dataSource.transaction(async (manager) => {
      const state = await this.readIn(manager, id);
      const gone = state && this.eventData(state);
      await deleteVersioned(manager, Article, { id }, current.version, preconditions, 'article', id);
      if (gone) await this.outbox.append(manager, { type: 'article.deleted', ownerId: current.author_id, resourceId: id, data: gone });
    });
  }

  /**
   * Applies changes in one transaction: loads the article (locked on PostgreSQL, so concurrent
   * status changes are checked one after the other), checks access, tags and the transition, then
   * writes the row and replaces its tag links. Publishing for the first time sets `published_at`.
   * The answer is the article as the transaction read it back before committing.
   */
  private async apply(
    id: number,
    changes: ArticleChanges,
    caller: AuthUser,
    preconditions: WritePreconditions | undefined,
  ): Promise<Authored<ArticleResponse>> {
    const state = await this.dataSource.transaction(async (manager) => {
      const lock = manager.connection.options.type === 'postgres' ? { lock: { mode: 'pessimistic_write' as const } } : {};
      const current = authorize(ARTICLES_POLICY, 'write', caller, await manager.findOne(Article, { where: { id }, ...lock }), id);
      // If-Match before the content is checked (RFC 9110 §13.2.1); evaluated again by the UPDATE
      versionCondition(preconditions, 'article', id, current.version);
      const tagIds = changes.tags === undefined ? undefined : await this.tags.requireIds(changes.tags, manager);
      if (changes.status !== undefined) authorizeTransition(ARTICLES_POLICY, caller, current.status, changes.status);
      const now = new Date();
      const patch: Partial<Article> = { updated_at: now };
      if (changes.title !== undefined) patch.title = changes.title;
      if (changes.body !== undefined) patch.body = changes.body;
      if (changes.status !== undefined) patch.status = changes.status;
      if (changes.status === 'published' && current.published_at === null) patch.published_at = now;
      await updateVersioned(manager, Article, { id }, current.version, preconditions, patch, 'article', id);
      if (tagIds !== undefined) {
        await manager.delete(ArticleTag, { article_id: id });
        await this.linkTags(manager, id, tagIds);
      }
      const publishes = changes.status === 'published' && current.status !== 'published';
      const written = await this.readIn(manager, id);
      await this.emit(manager, id, written, publishes ? ['article.updated', 'article.published'] : ['article.updated']);
      return written;
    });
    return this.respond(state, id);
  }

  /**
   * The answer of a write: `state` (read in its transaction) as the served API version shows it,
   * tagged with its version, with the author summary for v2 ({@link Authored}).
   * @throws 404 when the transaction found no article `id` (it cannot: the write just succeeded).
   */
  private respond(state: ArticleState | undefined, id: number): Authored<ArticleResponse> {
    if (!state) throw notFound('article', id);
    return authored(tagged(toArticleResponse(state.row, state.tags), state.row.version), state.author);
  }

  /** Appends `types`, in order, for article `id` as `state` shows it (owned by its author); nothing when it is gone. */
  private async emit(manager: EntityManager, id: number, state: ArticleState | undefined, types: EventType[]): Promise<void> {
    if (!state) return;
    const data = this.eventData(state);
    const ownerId = Number(state.row.author_id);
    for (const type of types) await this.outbox.append(manager, { type, ownerId, resourceId: id, data });
  }

  /**
   * Article `id` read through `manager` (in a write's transaction: what it wrote) with its tag
   * names and its author's summary, in two queries; undefined when it does not exist.
   */
  private async readIn(manager: EntityManager, id: number): Promise<ArticleState | undefined> {
    const [row] = await manager.query<Array<ArticleRow>>(this.findOneSql(), [id]);
    if (row === undefined) return undefined;
    return { row, tags: splitTagNames(row.tag_names), author: await summaryIn(manager, Number(row.author_id)) };
  }

  /** The article of `state` as `GET /v1` and `GET /v2` show it (v2 embeds the author). */
  private eventData(state: ArticleState): { v1: object; v2: object } {
    return inBothVersions<object>((version) => {
      const article = toArticleResponse(state.row, state.tags);
      return version === '2' && state.author ? { ...article, author: state.author } : article;
    });
  }

  private async linkTags(manager: EntityManager, articleId: number, tagIds: number[]): Promise<void> {
    if (tagIds.length > 0)
      await manager.insert(
        ArticleTag,
        tagIds.map((tag_id) => ({ article_id: articleId, tag_id })),
      );
  }

  /**
   * The tag names of the list's row `a`, as one text (names joined by `,`; NULL without tags):
   * `string_agg` on PostgreSQL, `group_concat` on SQLite, read through the `article_tags` primary
   * key and the tags' primary key. Tag names never hold a comma (docs/resources/tags.md#fields).
   * The aggregate is unordered — an ORDER BY in it would sort per row (a temporary B-tree on
   * SQLite); {@link splitTagNames} sorts the few names, as the reads of one article do.
   */
  private tagNamesSql(): string {
    const aggregate = this.dataSource.options.type === 'postgres' ? 'string_agg' : 'group_concat';
    return `(SELECT ${aggregate}(tgl.name, ',') FROM article_tags atl INNER JOIN tags tgl ON tgl.id = atl.tag_id WHERE atl.article_id = a.id)`;
  }
}

/** An article's row as {@link ArticlesService.findOne}'s statement reads it: its columns and its tag names in one text. */
type ArticleRow = Row<Article, 'author_id'> & { tag_names: string | null };

/** The names of a `tag_names` text ({@link ArticlesService.list}), sorted as the other reads sort them; none for NULL. */
function splitTagNames(names: string | null | undefined): string[] {
  return names ? names.split(',').sort() : [];
}
