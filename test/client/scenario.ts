/**
 * What a client developer writes against the published document: the types come from
 * `generated/api.d.ts` (openapi-typescript over /docs/openapi.json, written by
 * test/client.e2e-spec.ts), the calls go through openapi-fetch. The spec runs this file in jest
 * and type-checks it with `tsc --noEmit -p test/client/tsconfig.json`; the root tsconfig leaves it
 * out because the generated types exist only after the spec ran.
 */
import { expect } from '@jest/globals';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './generated/api.js';
import type { ScenarioModule } from './scenario-module.js';

type Schemas = components['schemas'];
export type Article = Schemas['Article'];
export type ArticleList = Schemas['ArticleList'];
export type ArticleSparse = Schemas['ArticleSparse'];
export type ArticleSparseList = Schemas['ArticleSparseList'];
export type ErrorResp = Schemas['ErrorResp'];
export type User = Schemas['User'];
export type ArticleStatus = Article['status'];

/** What the scenario saw, for the spec to report on. */
export interface ScenarioResult {
  user: User;
  tags: string[];
  articles: { first: Article; second: Article; draft: Article };
  lists: { nestjsPublished: ArticleList; published: ArticleList; anyOfTags: ArticleList; mineByTitle: ArticleList };
  validationError: ErrorResp;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The `data` of an openapi-fetch result after checking the status; anything else fails with the
 * status and the error body. `T` is the documented body of the success response.
 */
function expectData<T, E>(result: { data?: T; error?: E; response: Response }, status: number): T {
  const { data, error, response } = result;
  if (response.status !== status || data === undefined) {
    throw new Error(`${response.url}: expected ${status}, got ${response.status} ${JSON.stringify(error ?? data)}`);
  }
  return data;
}

/**
 * A read or list without `fields` returns whole articles, but the document types the 200 body as
 * full or sparse (a `fields=` response leaves properties out): narrow it by checking every
 * required property of `Article` is there. Throws on a sparse article.
 */
function whole(article: Article | ArticleSparse): Article {
  const required: Array<keyof Article> = ['id', 'title', 'body', 'status', 'tags', 'author', 'published_at', 'created_at', 'updated_at', 'links'];
  const missing = required.filter((name) => !(name in article));
  if (missing.length > 0) throw new Error(`article ${article.id} lacks ${missing.join(', ')}: a sparse article where a whole one was expected`);
  return article as Article;
}

/** {@link whole} for every article of a page. */
function wholePage(page: ArticleList | ArticleSparseList): ArticleList {
  return { ...page, data: page.data.map(whole) };
}

/** Sends `Authorization: Bearer <token>` on every request (openapi-fetch middleware). */
function bearerAuth(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
}

/**
 * Register, log in, create tags, create and publish articles with tags, list them with `tag`,
 * `status` and `sort`, and read a 422 as ErrorResp — all through the typed client at `baseUrl`.
 */
export async function runScenario(baseUrl: string): Promise<ScenarioResult> {
  const client = createClient<paths>({ baseUrl });
  const username = `client_${Date.now().toString(36)}`;
  const password = 'correct-horse-battery';

  // register (public): 201, Location
  const registered = await client.POST('/v2/users', { body: { username, password, name: 'Client Developer', email: `${username}@example.com` } });
  const user: User = expectData(registered, 201);
  expect(registered.response.headers.get('location')).toBe(`/v2/users/${user.id}`);
  expect(user).toMatchObject({ username, name: 'Client Developer', role: 'user' });
  expect(user).not.toHaveProperty('password');

  // log in: a token pair (202 and a challenge instead for an account with two-factor authentication on)
  const answer = expectData(await client.POST('/v2/login', { body: { username, password } }), 200);
  if ('mfa_required' in answer) throw new Error('the new account has two-factor authentication on');
  const pair = answer;
  const tokenType: 'Bearer' = pair.token_type;
  expect(tokenType).toBe('Bearer');
  expect(pair.expires_in).toBeGreaterThan(0);
  client.use(bearerAuth(pair.token));

  // tags
  const tags: string[] = [];
  for (const name of ['nestjs', 'api-design', 'typescript']) {
    const tag = expectData(await client.POST('/v2/tags', { body: { name } }), 201);
    expect(tag.name).toBe(name);
    tags.push(tag.name);
  }

  // articles: two published (one at creation time, one by PATCH), one left a draft
  const newArticle = async (body: { title: string; body?: string; tags?: string[]; status?: ArticleStatus }): Promise<Article> => {
    const created = await client.POST('/v2/articles', { body });
    const article = expectData(created, 201);
    expect(created.response.headers.get('location')).toBe(`/v2/articles/${article.id}`);
    return article;
  };
  const drafted = await newArticle({ title: 'Resource-oriented APIs', body: 'Nouns in paths, verbs in methods.', tags: ['NestJS', 'api-design'] });
  expect(drafted).toMatchObject({
    status: 'draft',
    published_at: null,
    tags: ['api-design', 'nestjs'],
    author: { id: user.id, username, name: 'Client Developer' },
  });
  const first = expectData(await client.PATCH('/v2/articles/{id}', { params: { path: { id: drafted.id } }, body: { status: 'published' } }), 200);
  expect(first.status).toBe('published');
  // API v2: the author is embedded, typed as the UserSummary schema (v1: an integer id)
  const authorName: string = first.author.username;
  expect(authorName).toBe(username);
  const firstPublishedAt: string | null = first.published_at;
  expect(firstPublishedAt).toEqual(expect.any(String));
  await sleep(20); // distinct published_at for the sort below
  const second = await newArticle({ title: 'Typed clients from OpenAPI', tags: ['typescript'], status: 'published' });
  expect(second.published_at).toEqual(expect.any(String));
  const draft = await newArticle({ title: 'Half-written notes on NestJS', tags: ['nestjs'] });

  const read = whole(expectData(await client.GET('/v2/articles/{id}', { params: { path: { id: first.id } } }), 200));
  expect(read).toEqual(first);

  // lists: filters and sort as query parameters, an ArticleList back
  const list = async (query: NonNullable<paths['/v2/articles']['get']['parameters']['query']>): Promise<ArticleList> =>
    wholePage(expectData(await client.GET('/v2/articles', { params: { query } }), 200));
  const titles = (page: ArticleList): string[] => page.data.map((article) => article.title);

  const nestjsPublished = await list({ tag: ['nestjs'], status: ['published'], sort: '-published_at' });
  expect(titles(nestjsPublished)).toEqual([first.title]);
  expect(nestjsPublished).toMatchObject({ page: 1, total: 1 });
  expect(nestjsPublished.data[0]).toEqual(first);

  const published = await list({ status: ['published'], sort: '-published_at' });
  expect(titles(published)).toEqual([second.title, first.title]);
  expect(published.total).toBe(2);
  expect(published.links.map((link) => link.rel)).toContain('self');

  // a sparse fieldset: the generated type knows unrequested properties may be absent
  const sparse = expectData(await client.GET('/v2/articles', { params: { query: { fields: 'title', status: ['published'], sort: '-published_at' } } }), 200);
  const sparseItems: Array<Article | ArticleSparse> = sparse.data;
  const sparseStatuses: Array<ArticleStatus | undefined> = sparseItems.map((article) => article.status);
  expect(sparseStatuses).toEqual([undefined, undefined]);
  expect(sparseItems.map((article) => article.title)).toEqual([second.title, first.title]);

  const anyOfTags = await list({ tag: ['typescript', 'api-design'], sort: 'title' });
  expect(titles(anyOfTags)).toEqual([first.title, second.title]);

  const mineByTitle = await list({ author: [user.id], sort: 'title', page: 1, size: 2 });
  expect(titles(mineByTitle)).toEqual([draft.title, first.title]);
  expect(mineByTitle).toMatchObject({ page: 1, size: 2, total: 3 });
  const statuses: ArticleStatus[] = mineByTitle.data.map((article) => article.status);
  expect(statuses).toEqual(['draft', 'published']);

  // a value that breaks a rule: 422, read as ErrorResp
  const refused = await client.POST('/v2/users', { body: { username: `${username}_2`, password, name: 'Too Old', age: 151 } });
  expect(refused.response.status).toBe(422);
  expect(refused.data).toBeUndefined();
  const validationError: ErrorResp | undefined = refused.error;
  if (validationError === undefined) throw new Error('422 without an error body');
  expect(validationError.code === 'validation_failed').toBe(true);
  expect(validationError.request_id).toBe(refused.response.headers.get('x-request-id'));
  const fields = (validationError.details ?? []).map((detail) => detail.field);
  expect(fields).toEqual(['age']);

  return { user, tags, articles: { first, second, draft }, lists: { nestjsPublished, published, anyOfTags, mineByTitle }, validationError };
}

/**
 * Misuses the generated types must refuse. Never called: it exists for `tsc`, where an unused
 * `@ts-expect-error` is itself an error — so these lines also prove the types are not `any`.
 */
export function refusedByTheTypes(client: Client<paths>, article: Article, error: ErrorResp): void {
  // @ts-expect-error `status` is an enumeration
  void client.GET('/v2/articles', { params: { query: { status: ['deleted'] } } });
  // @ts-expect-error `title` is required
  void client.POST('/v2/articles', { body: { body: 'no title' } });
  // @ts-expect-error no such path
  void client.GET('/v2/nowhere');
  // @ts-expect-error article ids are numbers
  void client.GET('/v2/articles/{id}', { params: { path: { id: 'one' } } });
  // @ts-expect-error the password is write-only: never in a User
  void ({} as User).password;
  // @ts-expect-error `published_at` may be null
  const publishedAt: string = article.published_at;
  // @ts-expect-error `code` is an enumeration
  const isTypo = error.code === 'validation_failure';
  void publishedAt;
  void isTypo;
}

/** The spec imports this module as a ScenarioModule (see scenario-module.ts): keep them in step. */
export const conformsToScenarioModule: ScenarioModule = { runScenario };
