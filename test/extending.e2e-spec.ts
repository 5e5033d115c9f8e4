import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../src/common/resources/resource-registry.js';
import { REGISTRY } from '../src/resources.js';
import { WIDGETS } from './extending/widgets/widgets.resource.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/**
 * A resource is declared once (docs/extending.md): a throwaway one, `widgets`, declared in this
 * test only (test/extending/widgets/: entity, migration, field table, DTOs, response, service,
 * controller, module, declaration), registered by one line — `REGISTRY.with(WIDGETS)` — and
 * nothing else. Everything derived from the registry must reach it: the DataSource (its entity
 * and migration), the scopes (they exist and guard it), the OpenAPI document (its paths, schemas,
 * tag, conditional requests), the event types (log, filter, webhook subscriptions), `ETag`s on its
 * responses and the list grammar. Every response is also checked against the served document.
 */
describe('a resource declared once: registered by one line, it reaches everything derived from the registry', () => {
  let app: NestExpressApplication;
  let owner: CreatedUser;
  let other: CreatedUser;
  let document: Record<string, any>;
  const http = () => request(app.getHttpServer());
  const as = (user: CreatedUser) => ({ Authorization: bearer(user.token) });

  const env = { WEBHOOK_ALLOW_HTTP: process.env.WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_NETWORKS: process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS };

  beforeAll(async () => {
    // a webhook on loopback (never called: the delivery worker does not run here)
    Object.assign(process.env, { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    app = await createTestApp({ registry: REGISTRY.with(WIDGETS) });
    owner = await createUser(app);
    other = await createUser(app);
    document = (await http().get('/docs/v1/openapi.json')).body;
  });

  afterAll(async () => {
    // its table goes with it: the next test files migrate the service's declarations only
    await app?.get(DataSource).undoLastMigration({ transaction: 'none' });
    await app?.close();
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const newWidget = async (user: CreatedUser, body: Record<string, unknown> = { name: 'Sprocket', colour: 'red' }) => {
    const res = await http().post('/v1/widgets').set(as(user)).send(body);
    expect(res.status).toBe(201);
    return res;
  };

  it('the registry handed down is the service’s plus the widgets, which the service’s alone lacks', () => {
    const registry = app.get<ResourceRegistry>(RESOURCE_REGISTRY);
    expect(registry.resources.map((resource) => resource.name)).toEqual([...REGISTRY.resources.map((resource) => resource.name), 'widgets']);
    expect(REGISTRY.scopes).not.toContain('widgets:read');
    expect(REGISTRY.eventTypes).not.toContain('widget.created');
  });

  it('database: its migration ran and its entity is mapped', async () => {
    const dataSource = app.get(DataSource);
    expect(dataSource.getMetadata('Widget').tableName).toBe('widgets');
    const applied = await dataSource.query<Array<{ name: string }>>('SELECT name FROM migrations ORDER BY id');
    expect(applied.map((row) => row.name)).toContain('Widgets1999000000000');
  });

  it('scopes: widgets:read and widgets:write exist (API keys take them) and guard its operations', async () => {
    expect(app.get<ResourceRegistry>(RESOURCE_REGISTRY).scopes.slice(-2)).toEqual(['widgets:read', 'widgets:write']);
    const key = await http()
      .post('/v1/api-keys')
      .set(as(owner))
      .send({ name: 'widget reader', scopes: ['widgets:read'] });
    expect(key.status).toBe(201);
    expect(key.body.scopes).toEqual(['widgets:read']);
    await newWidget(owner);
    const read = await http().get('/v1/widgets').set('X-API-Key', key.body.key);
    expect(read.status).toBe(200);
    const write = await http().post('/v1/widgets').set('X-API-Key', key.body.key).send({ name: 'Cog', colour: 'blue' });
    expect(write.status).toBe(403);
    expect(write.body).toEqual(errorBody('forbidden', 'missing scope widgets:write'));
    const todosKey = await http()
      .post('/v1/api-keys')
      .set(as(owner))
      .send({ name: 'todo reader', scopes: ['todos:read'] });
    expect((await http().get('/v1/widgets').set('X-API-Key', todosKey.body.key)).body).toEqual(errorBody('forbidden', 'missing scope widgets:read'));
    const unknown = await http()
      .post('/v1/api-keys')
      .set(as(owner))
      .send({ name: 'bad', scopes: ['widgets:admin'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.details).toEqual([
      { field: 'scopes', message: expect.stringContaining('todos:read, todos:write, events:read, webhooks:read, webhooks:write, widgets:read, widgets:write') },
    ]);
  });

  it('document: its paths, its tag, its schemas; its scopes in every list of scopes', () => {
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/v1/widgets'))).toEqual(['/v1/widgets', '/v1/widgets/{id}']);
    expect(document.tags.at(-1)).toEqual({ name: 'widgets', description: WIDGETS.description });
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['Widget', 'WidgetList', 'CreateWidgetBody', 'UpdateWidgetBody', 'WidgetSparse']),
    );
    expect(document.paths['/v1/widgets'].get.security).toContainEqual({ oauth2: ['widgets:read'] });
    expect(document.paths['/v1/widgets'].post.security).toContainEqual({ oauth2: ['widgets:write'] });
    expect(Object.keys(document.components.securitySchemes.oauth2.flows.authorizationCode.scopes).slice(-2)).toEqual(['widgets:read', 'widgets:write']);
    const scopes = document.components.schemas.CreateApiKeyBody.properties.scopes;
    expect(scopes.items.enum.slice(-2)).toEqual(['widgets:read', 'widgets:write']);
    expect(scopes.maxItems).toBe(scopes.items.enum.length);
  });

  it('document: it is versioned — ETag and 304 on its reads, If-Match, 412 and 428 on its PATCH', () => {
    const read = document.paths['/v1/widgets/{id}'].get;
    expect(read.responses['200'].headers.ETag).toEqual({ $ref: '#/components/headers/ETag' });
    expect(read.responses['304']).toBeDefined();
    expect(read.parameters).toContainEqual({ $ref: '#/components/parameters/If-None-Match' });
    const patch = document.paths['/v1/widgets/{id}'].patch;
    expect(patch.parameters).toContainEqual({ $ref: '#/components/parameters/If-Match' });
    expect(Object.keys(patch.responses)).toEqual(expect.arrayContaining(['412', '428']));
    expect(document.paths['/v1/widgets'].post.responses['201'].headers.ETag).toBeDefined();
  });

  it('event types: its own in the registry, the document, the log, its type filter and webhook subscriptions', async () => {
    expect(app.get<ResourceRegistry>(RESOURCE_REGISTRY).eventTypes.slice(-2)).toEqual(['widget.created', 'widget.updated']);
    expect(document.components.schemas.Event.properties.type.enum.slice(-2)).toEqual(['widget.created', 'widget.updated']);
    expect(document.components.schemas.CreateWebhookBody.properties.events.items.enum.slice(-2)).toEqual(['widget.created', 'widget.updated']);
    const widget = await newWidget(owner);
    const events = await http().get('/v1/events?type=widget.created&sort=-created_at').set(as(owner));
    expect(events.status).toBe(200);
    expect(events.body.data[0]).toMatchObject({ type: 'widget.created', data: { id: widget.body.id, name: 'Sprocket' } });
    const refused = await http().get('/v1/events?type=widget.exploded').set(as(owner));
    expect(refused.status).toBe(400);
    const webhook = await http()
      .post('/v1/webhooks')
      .set(as(owner))
      .send({ url: 'http://127.0.0.1:9/widgets', events: ['widget.created', 'widget.updated'] });
    expect(webhook.status).toBe(201);
    expect(webhook.body.events).toEqual(['widget.created', 'widget.updated']);
  });

  it('ETag: its responses carry one; If-None-Match → 304, a stale If-Match → 412', async () => {
    const created = await newWidget(owner);
    expect(created.headers.etag).toBe('"1.v1"');
    const path = `/v1/widgets/${created.body.id}`;
    const read = await http().get(path).set(as(owner));
    expect(read.headers.etag).toBe('"1.v1"');
    expect((await http().get(path).set(as(owner)).set('If-None-Match', read.headers.etag)).status).toBe(304);
    const changed = await http().patch(path).set(as(owner)).set('If-Match', read.headers.etag).send({ colour: 'blue' });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).toBe('"2.v1"');
    const stale = await http().patch(path).set(as(owner)).set('If-Match', read.headers.etag).send({ colour: 'red' });
    expect(stale.status).toBe(412);
    expect(stale.body).toEqual(errorBody('precondition_failed'));
    expect((await http().get(path).set(as(other))).status).toBe(403);
  });

  it('list grammar: the paging envelope, its filters and sort keys, and 400 for others', async () => {
    for (const [name, colour] of [
      ['Alpha', 'red'],
      ['Bravo', 'blue'],
      ['Charlie', 'red'],
    ])
      await newWidget(other, { name, colour });
    const page = await http().get('/v1/widgets?colour=red&sort=-name&size=1').set(as(other));
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ page: 1, size: 1, total: 2, data: [{ name: 'Charlie', colour: 'red', owner: other.user.id }] });
    expect(page.body.links.map((link: { rel: string }) => link.rel)).toEqual(expect.arrayContaining(['self', 'first', 'next', 'last']));
    const sparse = await http().get('/v1/widgets?fields=name&sort=name').set(as(other));
    expect(sparse.body.data.map((item: Record<string, unknown>) => Object.keys(item).sort())).toEqual([
      ['id', 'links', 'name'],
      ['id', 'links', 'name'],
      ['id', 'links', 'name'],
    ]);
    expect((await http().get('/v1/widgets?colour=green').set(as(other))).status).toBe(400);
    expect((await http().get('/v1/widgets?sort=colour').set(as(other))).status).toBe(400);
    expect((await http().get('/v1/widgets?shape=round').set(as(other))).status).toBe(400);
  });
});
