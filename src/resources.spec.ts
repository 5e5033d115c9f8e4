import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiOkResponse, ApiOperation, ApiTags, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { ApiCredentials } from './auth/decorators/auth.decorators.js';
import { ListOperation } from './common/decorators/operation.decorators.js';
import { defineFields } from './common/list/field-table.js';
import { parseListQuery } from './common/list/list-query.js';
import { completeDocument } from './openapi/complete-document.js';
import { defineResource, entitiesOf, eventTypesOf, migrationsOf, readOnlyNamesOf, scopeResourcesOf, tagsOf } from './common/resources/define-resource.js';
import { fillRegisteredLists, registeredCount, registeredList, registeredText } from './common/resources/resource-registry.js';
import { schemaOf, SHARED_MIGRATIONS } from './database/data-source.js';
import { IdempotencyRecord } from './idempotency/idempotency-record.entity.js';
import { MailMessage } from './mail/mail-message.entity.js';
import { REGISTRY, RESOURCES } from './resources.js';

const SCOPE_RESOURCES = scopeResourcesOf(RESOURCES);
const ALL_SCOPES = REGISTRY.scopes;
const ENTITIES = schemaOf(RESOURCES).entities;

/** The entity of a throwaway resource, declared below as the engineer adding one would. */
class Gadget {
  id: number;
  label: string;
  colour: string;
  maker_id: number;
  created_at: Date;
}

const GADGETS = defineResource({
  name: 'gadgets',
  description: 'Gadgets, for a test.',
  scopes: true,
  entities: [Gadget],
  module: async () => GadgetsModule,
  events: { 'gadget.created': 'a gadget is created' },
  versioned: ['Gadget'],
  fields: defineFields<Gadget>()({
    alias: 'x',
    fields: {
      label: { column: 'label', sort: true },
      colour: { column: 'colour', filter: { type: 'enum', values: ['red', 'blue'], description: 'Gadgets of this colour.', example: 'red' } },
      maker: { column: 'maker_id', filter: { type: 'int', description: 'Gadgets by this user id.', example: 1 } },
      created_at: { column: 'created_at', sort: true },
    },
    links: ['maker_id'],
  }),
});

const WITH_GADGETS = [...RESOURCES, GADGETS] as const;

/** The controller of the throwaway resource: a list operation documented from its field table. */
@ApiTags('gadgets')
@ApiCredentials()
@Controller('gadgets')
class GadgetsController {
  @Get()
  @ListOperation(GADGETS.fields)
  @ApiOperation({ summary: 'List gadgets' })
  @ApiOkResponse({ description: 'A page of gadgets.' })
  list(): unknown[] {
    return [];
  }
}

@Module({ controllers: [GadgetsController] })
class GadgetsModule {}

describe('a resource declaration reaches the scopes, the document and the list grammar', () => {
  let app: INestApplication;
  let document: Record<string, any>;

  beforeAll(async () => {
    app = await NestFactory.create(GadgetsModule, { logger: false, abortOnError: false });
    const generated = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    completeDocument(generated, WITH_GADGETS);
    document = generated as unknown as Record<string, any>;
  });

  afterAll(async () => {
    await app.close();
  });

  it('scopes: a declaration with scopes adds <name>:read and <name>:write, after the declared ones', () => {
    expect(scopeResourcesOf(WITH_GADGETS)).toEqual([...SCOPE_RESOURCES, 'gadgets']);
    expect(scopeResourcesOf([GADGETS, { ...GADGETS, name: 'parts', scopes: false }])).toEqual(['gadgets']);
    expect(readOnlyNamesOf([GADGETS, { ...GADGETS, name: 'logs', readOnly: true }])).toEqual(new Set(['logs']));
    expect(() => defineResource({ ...GADGETS, name: 'parts', scopes: false, readOnly: true })).toThrow('resource parts: readOnly without scopes');
  });

  it('scopes: the service’s scopes are those of src/resources.ts, each described', () => {
    expect(SCOPE_RESOURCES).toEqual(RESOURCES.filter((resource) => resource.scopes).map((resource) => resource.name));
    const readOnly = new Set<string>(RESOURCES.filter((resource) => 'readOnly' in resource && resource.readOnly).map((resource) => resource.name));
    expect(ALL_SCOPES).toEqual(SCOPE_RESOURCES.flatMap((name) => (readOnly.has(name) ? [`${name}:read`] : [`${name}:read`, `${name}:write`])));
    // a read-only collection (the event log) has no write scope
    expect(ALL_SCOPES).toContain('events:read');
    expect(ALL_SCOPES).not.toContain('events:write');
    expect(REGISTRY.describeScope('todos:read')).toBe('read todos');
    expect(REGISTRY.describeScope('users:write')).toBe('create, change and delete user accounts');
  });

  it('docs: its tag, with its description, in declaration order', () => {
    expect(document.tags).toEqual([{ name: 'gadgets', description: 'Gadgets, for a test.' }]);
    expect(tagsOf(WITH_GADGETS).map((tag) => tag.name)).toEqual([...RESOURCES.map((resource) => resource.name), 'gadgets']);
  });

  it('docs: a tag no declaration names is listed without a description', () => {
    const generated = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    completeDocument(generated, RESOURCES);
    expect(generated.tags).toEqual([{ name: 'gadgets' }]);
  });

  it('docs: its list operation documents the sort keys, filters and fields of its field table', () => {
    const parameters: Array<Record<string, any>> = document.paths['/gadgets'].get.parameters;
    const byName = Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter]));
    expect(Object.keys(byName)).toEqual(['page', 'size', 'offset', 'limit', 'cursor', 'sort', 'colour', 'maker', 'fields', 'Prefer']);
    expect(byName.sort.description).toContain('Allowed: id, -id, label, -label, created_at, -created_at.');
    expect(byName.colour.schema.items).toEqual({ type: 'string', enum: ['red', 'blue'] });
    expect(byName.maker.schema.items).toMatchObject({ type: 'integer', minimum: 0 });
    expect(byName.fields.description).toContain('Allowed names: id, label, colour, maker, created_at.');
  });

  it('list grammar: the parser takes its sort keys, filters and fields and refuses others', () => {
    expect(parseListQuery({ sort: '-label', colour: 'blue', fields: 'maker' }, GADGETS.fields)).toMatchObject({
      sort: [
        { field: 'label', column: 'x.label', direction: 'DESC' },
        { field: 'id', column: 'x.id', direction: 'DESC' },
      ],
      filters: { colour: ['blue'] },
      fields: ['maker'],
    });
    expect(() => parseListQuery({ colour: 'green' }, GADGETS.fields)).toThrow('colour must be one of red, blue');
    expect(() => parseListQuery({ sort: 'maker' }, GADGETS.fields)).toThrow('cannot sort by maker; sortable: id, label, created_at');
  });

  it('entities: its entities join the DataSource’s; the service’s are those of src/resources.ts, users, auth and OAuth included, the idempotency records and the mail outbox', () => {
    expect(entitiesOf(WITH_GADGETS)).toEqual([...entitiesOf(RESOURCES), Gadget]);
    expect(ENTITIES).toEqual([...entitiesOf(RESOURCES), IdempotencyRecord, MailMessage]);
    const names = ENTITIES.map((entity) => entity.name).sort();
    expect(names).toEqual(
      [
        'ApiKey',
        'Article',
        'ArticleTag',
        'Comment',
        'OAuthAuthorizationCode',
        'OAuthClient',
        'OAuthGrant',
        'OAuthRefreshToken',
        'Order',
        'OrderItem',
        'RefreshToken',
        'Tag',
        'Todo',
        'User',
        'EventRecord',
        'WebhookDelivery',
        'WebhookSubscription',
        'IdempotencyRecord',
        'MailMessage',
        'PasswordResetToken',
        'EmailVerificationToken',
        'Login',
        'TotpSecret',
        'TotpRecoveryCode',
      ].sort(),
    );
  });

  it('refuses a malformed name, a name declared twice and a scope noun without scopes', () => {
    const module = async () => GadgetsModule;
    expect(() => defineResource({ name: 'Gadgets', description: 'd', scopes: false, entities: [], module })).toThrow('use lower-case letters, digits and -');
    expect(() => scopeResourcesOf([GADGETS, GADGETS])).toThrow('resource gadgets is declared twice');
    expect(() => defineResource({ name: 'parts', description: 'd', scopes: false, scopeNoun: 'parts', entities: [], module })).toThrow(
      'scopeNoun without scopes',
    );
    expect(() => defineResource({ ...GADGETS, name: 'parts', events: { 'Part.Created': 'd' } })).toThrow('event type "Part.Created": use <word>.<word>');
    expect(() => REGISTRY.with({ ...GADGETS, events: { 'todo.created': 'd' } })).toThrow('event type todo.created is declared twice');
  });

  it('event types: each declaration’s, those of todos, articles, comments, orders and users first (the documents’ order), a new one after them', () => {
    expect(REGISTRY.eventTypes).toEqual([
      'todo.created',
      'todo.updated',
      'todo.deleted',
      'article.created',
      'article.updated',
      'article.published',
      'article.deleted',
      'comment.created',
      'comment.updated',
      'comment.deleted',
      'order.created',
      'order.updated',
      'order.paid',
      'order.shipped',
      'order.delivered',
      'order.cancelled',
      'order.deleted',
      'user.deleted',
    ]);
    expect(REGISTRY.with(GADGETS).eventTypes).toEqual([...REGISTRY.eventTypes, 'gadget.created']);
    expect(eventTypesOf(RESOURCES)[0]).toBe('user.deleted');
  });

  it('docs: the table of docs/events.md#event-types describes exactly the declarations’ event types', () => {
    const section = readFileSync(path.join(process.cwd(), 'docs/events.md'), 'utf8').split('## Event types')[1].split('\n## ')[0];
    const rows = section.split('\n').filter((line) => line.startsWith('| `'));
    const types = rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([a-z]+\.[a-z]+)`/g)].map((match) => match[1]));
    expect([...types].sort()).toEqual([...REGISTRY.eventTypes].sort());
  });

  it('conditional requests: the versioned schemas are the declarations’', () => {
    expect([...REGISTRY.versionedSchemas].sort()).toEqual(['Article', 'ArticleV2', 'Comment', 'CommentV2', 'Order', 'Tag', 'Todo', 'User']);
    expect(REGISTRY.with(GADGETS).versionedSchemas.has('Gadget')).toBe(true);
  });

  it('migrations: the shared ones and the declarations’, in timestamp order, each once', () => {
    const migrations = schemaOf(RESOURCES).migrations;
    const stamps = migrations.map((migration) => migration.name.slice(-13));
    expect(stamps).toEqual([...stamps].sort());
    expect(new Set(migrations).size).toBe(migrations.length);
    expect(migrations.map((migration) => migration.name)).toEqual([
      'InitialSchema1763700000000',
      'ArticlesCommentsTagsOrders1763800000000',
      'ApiKeysSessions1763900000000',
      'OAuth1764000000000',
      'SessionsToSharedStore1764100000000',
      'ListIndexes1764200000000',
      'ResourceVersions1764300000000',
      'SyncIndexes1764420000000',
      'Events1764500000000',
      'Webhooks1764510000000',
      'EventTraceContext1764520000000',
      'IdempotencyKeys1764600000000',
      'FilterOperatorIndexes1764650000000',
      'MailPasswordResets1764700000000',
      'FullTextSearch1764710000000',
      'EmailVerification1764800000000',
      'Logins1764900000000',
      'SearchTables1764950000000',
      'Totp1765000000000',
    ]);
    class Gadgets1999000000000 {
      async up(): Promise<void> {}
      async down(): Promise<void> {}
    }
    expect(migrationsOf([{ ...GADGETS, migrations: [Gadgets1999000000000] }], SHARED_MIGRATIONS).at(-1)).toBe(Gadgets1999000000000);
  });

  it('modules: each once, in the registry’s module order (the documents’ path order), a new one last', async () => {
    const modules = await REGISTRY.with(GADGETS).loadModules();
    expect(modules.map((module) => module.name)).toEqual([
      'HealthModule',
      'AuthModule',
      'UsersModule',
      'TodosModule',
      'TagsModule',
      'ArticlesModule',
      'CommentsModule',
      'OrdersModule',
      'OAuthModule',
      'EventsModule',
      'WebhooksModule',
      'RootModule',
      'GadgetsModule',
    ]);
  });

  it('lists named in decorators: the document gets the registry’s, in place; an unknown list is refused', () => {
    const registry = REGISTRY.with(GADGETS);
    const document = {
      schema: { type: 'array', maxItems: registeredCount('eventTypes', 1), items: { type: 'string', enum: registeredList('eventTypes', '*') } },
      scope: { pattern: `^(${registeredText('scopes', '|')})$`, example: registeredList('scopes') },
    };
    fillRegisteredLists(document, registry);
    expect(document).toEqual({
      schema: { type: 'array', maxItems: registry.eventTypes.length + 1, items: { type: 'string', enum: ['*', ...registry.eventTypes] } },
      scope: { pattern: `^(${registry.scopes.join('|')})$`, example: registry.scopes },
    });
    expect(Object.keys(document.schema)).toEqual(['type', 'maxItems', 'items']);
    expect(registry.scopes.slice(-2)).toEqual(['gadgets:read', 'gadgets:write']);
    expect(() => fillRegisteredLists({ enum: ['{registry:gadgets}'] }, registry)).toThrow('names a list the resource registry does not have');
  });
});
