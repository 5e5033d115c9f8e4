import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { ArgumentMetadata } from '@nestjs/common';
// upward on purpose, in a test only: the pipe is checked against the resources' real DTOs
import { CreateApiKeyDto } from '../../auth/dto/create-api-key.dto.js';
import { CreateOAuthClientDto } from '../../oauth/dto/create-oauth-client.dto.js';
import { OmitType, PickType } from '@nestjs/swagger';
import { CreateArticleDto, ReplaceArticleDto, UpdateArticleDto } from '../../articles/dto/create-article.dto.js';
import { CreateCommentDto, UpdateCommentDto } from '../../comments/dto/create-comment.dto.js';
import { CreateOrderDto, UpdateOrderDto } from '../../orders/dto/create-order.dto.js';
import { CreateTodoDto, ReplaceTodoDto, UpdateTodoDto } from '../../todos/dto/create-todo.dto.js';
import { CreateUserDto } from '../../users/dto/create-user.dto.js';
import { ReplaceUserDto, UpdateUserDto } from '../../users/dto/replace-user.dto.js';
import { readOnlyPropertiesOf } from '../decorators/validation.decorators.js';
import { ApiException } from '../errors/api-exception.js';
import { bindRegistryValidation } from '../resources/registered-values.js';
import { REGISTRY } from '../../resources.js';
import { ApiValidationPipe } from './api-validation.pipe.js';

const pipe = new ApiValidationPipe();
// the scopes and event types of bodies are the registry's (ResourcesModule binds the application's)
bindRegistryValidation(REGISTRY);

const asBody = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype, data: undefined });

/** A valid registration body. */
const USER = { username: 'ada_l', password: 'correct horse battery', name: 'Ada Lovelace' };
/** A valid todo body. */
const TODO_BODY = { title: 'Buy milk' };

/** Runs the pipe on a body for `metatype`; returns the ApiException it rejects with (fails otherwise). */
async function rejection(value: unknown, metatype: ArgumentMetadata['metatype']): Promise<ApiException> {
  let result: unknown;
  try {
    result = await pipe.transform(value, asBody(metatype));
  } catch (error) {
    if (error instanceof ApiException) return error;
    throw error;
  }
  throw new Error(`expected an ApiException, the pipe returned ${JSON.stringify(result)}`);
}

/** Asserts a 400 `bad_request` whose only detail is `{field, message}` and whose message is that message. */
function expectBadRequest(error: ApiException, field: string, message: string): void {
  expect(error.getStatus()).toBe(400);
  expect(error.code).toBe('bad_request');
  expect(error.message).toBe(message);
  expect(error.details).toEqual([{ field, message }]);
}

/** Asserts a 422 `validation_failed` whose only detail names `field`, with the detail's message as the message. */
function expectUnprocessable(error: ApiException, field: string, message: string | RegExp): void {
  expect(error.getStatus()).toBe(422);
  expect(error.code).toBe('validation_failed');
  expect(error.details).toHaveLength(1);
  expect(error.details?.[0].field).toBe(field);
  if (typeof message === 'string') expect(error.details?.[0].message).toBe(message);
  else expect(error.details?.[0].message).toMatch(message);
  expect(error.message).toBe(error.details?.[0].message);
}

describe('ApiValidationPipe', () => {
  describe('what it validates', () => {
    it('returns a DTO instance holding the sent properties', async () => {
      const result = await pipe.transform({ ...USER, age: 36, email: 'ada@example.com', role: 'user' }, asBody(CreateUserDto));
      expect(result).toBeInstanceOf(CreateUserDto);
      expect({ ...(result as object) }).toEqual({ ...USER, age: 36, email: 'ada@example.com', role: 'user' });
    });

    it.each([
      ['query', 'a'],
      ['param', '7'],
      ['custom', { x: 1 }],
    ] as const)('passes a %s argument through unchanged', async (type, value) => {
      await expect(pipe.transform(value, { type, metatype: CreateUserDto, data: undefined })).resolves.toBe(value);
    });

    it.each([String, Number, Boolean, Object, Array, undefined])('passes a body through when the metatype is %p (not a DTO)', async (metatype) => {
      const value = { anything: true };
      await expect(pipe.transform(value, asBody(metatype))).resolves.toBe(value);
    });

    it('does not change the body it was given', async () => {
      const body = { ...USER, id: 3, links: [] };
      await pipe.transform(body, asBody(CreateUserDto));
      expect(body).toEqual({ ...USER, id: 3, links: [] });
    });
  });

  describe('body that is not an object (400)', () => {
    it.each([
      ['undefined', undefined],
      ['null', null],
      ['a string', 'text'],
      ['a number', 42],
      ['a boolean', true],
      ['an array', []],
      ['an array of objects', [{ ...USER }]],
    ])('rejects %s', async (_, value) => {
      const error = await rejection(value, CreateUserDto);
      expect(error.getStatus()).toBe(400);
      expect(error.code).toBe('bad_request');
      expect(error.message).toBe('request body must be a JSON object');
      expect(error.details).toBeUndefined();
    });
  });

  describe('required fields (400)', () => {
    it('rejects a missing name with `name is required`', async () => {
      const { name: _name, ...body } = USER;
      expectBadRequest(await rejection(body, CreateUserDto), 'name', 'name is required');
    });

    it('rejects name: null', async () => {
      expectBadRequest(await rejection({ ...USER, name: null }, CreateUserDto), 'name', 'name is required');
    });

    it('rejects name: ""', async () => {
      expectBadRequest(await rejection({ ...USER, name: '' }, CreateUserDto), 'name', 'name is required');
    });

    it.each([
      ['missing', undefined],
      ['null', null],
      ['empty', ''],
    ])('rejects a %s todo title', async (_, title) => {
      expectBadRequest(await rejection({ title }, CreateTodoDto), 'title', 'title is required');
    });

    it('names a missing array `<field> is required`, whatever its validators (IsArray, IsString each, …)', async () => {
      const client = { name: 'Todo Sync', redirect_uris: ['https://todo-sync.example/callback'], confidential: false };
      expectBadRequest(await rejection(client, CreateOAuthClientDto), 'scopes', 'scopes is required');
      expectBadRequest(
        await rejection({ ...client, scopes: ['todos:read'], redirect_uris: undefined }, CreateOAuthClientDto),
        'redirect_uris',
        'redirect_uris is required',
      );
      expectBadRequest(await rejection({ name: 'export' }, CreateApiKeyDto), 'scopes', 'scopes is required');
      expectBadRequest(await rejection({ currency: 'EUR' }, CreateOrderDto), 'items', 'items is required');
    });

    it('checks scopes against the registry: an unknown one or too many → 422 listing the scopes', async () => {
      const unknown = await rejection({ name: 'export', scopes: ['todos:read', 'gadgets:read'] }, CreateApiKeyDto);
      expect(unknown.getStatus()).toBe(422);
      expect(unknown.details).toEqual([{ field: 'scopes', message: `each scope must be one of ${REGISTRY.scopes.join(', ')}` }]);
      const many = await rejection({ name: 'export', scopes: [...REGISTRY.scopes, REGISTRY.scopes[0]] }, CreateApiKeyDto);
      expect(many.getStatus()).toBe(422);
      expect(await pipe.transform({ name: 'export', scopes: ['events:read'] }, asBody(CreateApiKeyDto))).toMatchObject({ scopes: ['events:read'] });
    });

    it('names a missing property of a nested object with its path', async () => {
      const error = await rejection({ currency: 'EUR', items: [{ quantity: 1, unit_price_cents: 1 }] }, CreateOrderDto);
      expectBadRequest(error, 'items[0].sku', 'items[0].sku is required');
    });

    it('still names a present value of the wrong type by its type', async () => {
      const client = { name: 'Todo Sync', redirect_uris: ['https://todo-sync.example/callback'], confidential: false };
      const error = await rejection({ ...client, scopes: 'todos:read' }, CreateOAuthClientDto);
      expect(error.getStatus()).toBe(400);
      expect(error.details).toEqual([{ field: 'scopes', message: expect.not.stringContaining('required') }]);
    });

    it('lists every missing field', async () => {
      const error = await rejection({}, CreateUserDto);
      expect(error.getStatus()).toBe(400);
      expect(error.message).toBe('3 fields are invalid');
      expect(error.details).toEqual([
        { field: 'username', message: 'username is required' },
        { field: 'password', message: 'password is required' },
        { field: 'name', message: 'name is required' },
      ]);
    });
  });

  describe('wrong JSON type (400)', () => {
    it('rejects age: "ten"', async () => {
      expectBadRequest(await rejection({ ...USER, age: 'ten' }, CreateUserDto), 'age', 'age must be an integer number');
    });

    it.each([
      ['name', 42, 'name must be a string'],
      ['name', ['Ada'], 'name must be a string'],
      ['email', 7, 'email must be a string'],
      ['role', 1, 'role must be a string'],
      ['age', true, 'age must be an integer number'],
      ['age', '36', 'age must be an integer number'],
    ])('rejects %s: %j', async (field, value, message) => {
      expectBadRequest(await rejection({ ...USER, [field]: value }, CreateUserDto), field, message);
    });

    it.each([
      ['content', 5, 'content must be a string'],
      ['status', 1, 'status must be a string'],
      ['title', { text: 'x' }, 'title must be a string'],
    ])('rejects todo %s: %j', async (field, value, message) => {
      expectBadRequest(await rejection({ ...TODO_BODY, [field]: value }, CreateTodoDto), field, message);
    });

    it.each([
      ['CreateTodoDto', CreateTodoDto],
      ['UpdateTodoDto', UpdateTodoDto],
    ] as const)('rejects todo status: null (omittable, not nullable) on %s', async (_, dto) => {
      expectBadRequest(await rejection({ ...TODO_BODY, status: null }, dto), 'status', 'status must be a string');
    });

    it('rejects role: null (omittable, not nullable)', async () => {
      expectBadRequest(await rejection({ ...USER, role: null }, CreateUserDto), 'role', 'role must be a string');
    });
  });

  describe('value rules (422)', () => {
    it('rejects age: -1', async () => {
      expectUnprocessable(await rejection({ ...USER, age: -1 }, CreateUserDto), 'age', 'age must not be less than 0');
    });

    it('rejects age: 151', async () => {
      expectUnprocessable(await rejection({ ...USER, age: 151 }, CreateUserDto), 'age', 'age must not be greater than 150');
    });

    it.each([0, 150])('accepts age: %d (the bounds)', async (age) => {
      await expect(pipe.transform({ ...USER, age }, asBody(CreateUserDto))).resolves.toMatchObject({ age });
    });

    it('rejects email: "x"', async () => {
      expectUnprocessable(await rejection({ ...USER, email: 'x' }, CreateUserDto), 'email', 'email must be an email');
    });

    it('rejects status: "finished" on a todo', async () => {
      expectUnprocessable(
        await rejection({ ...TODO_BODY, status: 'finished' }, CreateTodoDto),
        'status',
        'status must be one of the following values: pending, in_progress, done',
      );
    });

    it('rejects an unknown role', async () => {
      expectUnprocessable(await rejection({ ...USER, role: 'root' }, CreateUserDto), 'role', /^role must be one of the following values: user, admin$/);
    });

    it('rejects a username outside the pattern with its own message', async () => {
      expectUnprocessable(await rejection({ ...USER, username: 'Ada!' }, CreateUserDto), 'username', 'username must be 3-32 characters of a-z, 0-9 and _');
    });

    it('rejects a too short password', async () => {
      expectUnprocessable(
        await rejection({ ...USER, password: 'short' }, CreateUserDto),
        'password',
        /^password must be longer than or equal to 8 characters$/,
      );
    });

    it('rejects a too long name (other than empty: 422, not 400)', async () => {
      expectUnprocessable(await rejection({ ...USER, name: 'x'.repeat(101) }, CreateUserDto), 'name', /^name must be shorter than or equal to 100 characters$/);
    });

    it('rejects a too long todo title', async () => {
      expectUnprocessable(await rejection({ title: 't'.repeat(201) }, CreateTodoDto), 'title', /^title must be shorter than or equal to 200 characters$/);
    });

    it('lists every failing field', async () => {
      const error = await rejection({ ...USER, age: -1, email: 'x', role: 'root' }, CreateUserDto);
      expect(error.getStatus()).toBe(422);
      expect(error.code).toBe('validation_failed');
      expect(error.message).toBe('3 fields are invalid');
      expect(error.details?.map((d) => d.field)).toEqual(['age', 'email', 'role']);
      expect(error.details).toEqual(
        expect.arrayContaining([
          { field: 'age', message: 'age must not be less than 0' },
          { field: 'email', message: 'email must be an email' },
        ]),
      );
    });
  });

  describe('optional fields', () => {
    it('accepts null for optional age, email and content', async () => {
      const user = await pipe.transform({ ...USER, age: null, email: null }, asBody(CreateUserDto));
      expect(user).toMatchObject({ age: null, email: null });
      const todo = await pipe.transform({ ...TODO_BODY, content: null }, asBody(CreateTodoDto));
      expect(todo).toMatchObject({ content: null });
    });

    it('accepts a body with only the required fields', async () => {
      await expect(pipe.transform({ ...TODO_BODY }, asBody(CreateTodoDto))).resolves.toBeInstanceOf(CreateTodoDto);
    });
  });

  describe('properties the operation does not accept (400)', () => {
    it('rejects an unknown property naming it', async () => {
      expectBadRequest(await rejection({ ...USER, is_admin: true }, CreateUserDto), 'is_admin', 'is_admin is not an accepted property');
    });

    it('rejects a write-only-elsewhere property such as password_hash', async () => {
      expectBadRequest(await rejection({ ...USER, password_hash: 'x' }, CreateUserDto), 'password_hash', 'password_hash is not an accepted property');
    });

    it('rejects owner on users (owner is read-only only where the resource has it)', async () => {
      expectBadRequest(await rejection({ ...USER, owner: 1 }, CreateUserDto), 'owner', 'owner is not an accepted property');
    });

    it('rejects camelCase spellings (snake_case only)', async () => {
      expectBadRequest(await rejection({ ...USER, createdAt: 'x' }, CreateUserDto), 'createdAt', 'createdAt is not an accepted property');
    });

    it('names every unknown property', async () => {
      const error = await rejection({ ...TODO_BODY, a: 1, b: null }, CreateTodoDto);
      expect(error.getStatus()).toBe(400);
      expect(error.message).toBe('2 fields are invalid');
      expect(error.details).toEqual([
        { field: 'a', message: 'a is not an accepted property' },
        { field: 'b', message: 'b is not an accepted property' },
      ]);
    });

    it.each(['constructor', '__proto__', 'toString'])('rejects %s as an own property and does not touch prototypes', async (name) => {
      const body = JSON.parse(`{"title": "x", ${JSON.stringify(name)}: {"polluted": true}}`) as object;
      const error = await rejection(body, CreateTodoDto);
      expect(error.getStatus()).toBe(400);
      expect(error.details).toEqual([{ field: name, message: `${name} is not an accepted property` }]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('lists a prototype name together with the other problems', async () => {
      const body = JSON.parse('{"title": "", "constructor": 1, "status": "finished"}') as object;
      const error = await rejection(body, CreateTodoDto);
      expect(error.getStatus()).toBe(400);
      expect(error.message).toBe('3 fields are invalid');
      expect(error.details).toHaveLength(3);
      expect(error.details).toEqual(
        expect.arrayContaining([
          { field: 'title', message: 'title is required' },
          { field: 'constructor', message: 'constructor is not an accepted property' },
          { field: 'status', message: 'status must be one of the following values: pending, in_progress, done' },
        ]),
      );
    });
  });

  describe('read-only properties (accepted and dropped)', () => {
    const READ_ONLY = { id: 9, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z', links: [{ rel: 'self', href: '/v1/users/9' }] };

    it('drops id, created_at, updated_at and links from a user body', async () => {
      const result = (await pipe.transform({ ...USER, ...READ_ONLY }, asBody(CreateUserDto))) as Record<string, unknown>;
      expect(result).toBeInstanceOf(CreateUserDto);
      expect({ ...result }).toEqual(USER);
      for (const key of Object.keys(READ_ONLY)) expect(result).not.toHaveProperty(key);
    });

    it('drops them whatever their value or type', async () => {
      const result = await pipe.transform({ ...USER, id: 'abc', created_at: null, updated_at: 5, links: 'x' }, asBody(CreateUserDto));
      expect({ ...(result as object) }).toEqual(USER);
    });

    it.each([
      ['CreateTodoDto', CreateTodoDto],
      ['ReplaceTodoDto', ReplaceTodoDto],
      ['UpdateTodoDto', UpdateTodoDto],
    ] as const)('drops owner and the common read-only properties from a todo body (%s)', async (_, dto) => {
      const result = (await pipe.transform({ ...TODO_BODY, ...READ_ONLY, owner: 4, status: 'done' }, asBody(dto))) as Record<string, unknown>;
      expect(result).toBeInstanceOf(dto);
      expect({ ...result }).toEqual({ ...TODO_BODY, status: 'done' });
      expect(result).not.toHaveProperty('owner');
    });

    it('accepts a todo exactly as a GET returned it (GET → edit → PUT)', async () => {
      const read = { ...READ_ONLY, id: 3, title: 'Buy milk', content: null, status: 'pending', owner: 1 };
      const result = await pipe.transform({ ...read, status: 'done' }, asBody(ReplaceTodoDto));
      expect({ ...(result as object) }).toEqual({ title: 'Buy milk', content: null, status: 'done' });
    });

    it('accepts a user exactly as a GET returned it (GET → edit → PUT)', async () => {
      const read = { ...READ_ONLY, username: 'ada_l', name: 'Ada', age: null, email: null, role: 'user' };
      const result = await pipe.transform({ ...read, name: 'Ada L.' }, asBody(ReplaceUserDto));
      expect(result).toBeInstanceOf(ReplaceUserDto);
      expect({ ...(result as object) }).toEqual({ username: 'ada_l', name: 'Ada L.', age: null, email: null, role: 'user' });
    });

    it('still validates the other fields', async () => {
      expectBadRequest(await rejection({ ...READ_ONLY, owner: 1 }, CreateTodoDto), 'title', 'title is required');
    });

    it.each([
      ['CreateTodoDto', CreateTodoDto, ['owner']],
      ['ReplaceTodoDto (subclass)', ReplaceTodoDto, ['owner']],
      ['UpdateTodoDto (PartialType)', UpdateTodoDto, ['owner']],
      ['CreateArticleDto', CreateArticleDto, ['author', 'published_at']],
      ['ReplaceArticleDto (subclass)', ReplaceArticleDto, ['author', 'published_at']],
      ['UpdateArticleDto (PartialType)', UpdateArticleDto, ['author', 'published_at']],
      ['CreateCommentDto', CreateCommentDto, ['author', 'article']],
      ['UpdateCommentDto (PartialType)', UpdateCommentDto, ['author', 'article']],
      ['CreateOrderDto (subclass of the abstract content)', CreateOrderDto, ['user', 'total_cents']],
      ['UpdateOrderDto (PartialType of a subclass)', UpdateOrderDto, ['user', 'total_cents']],
      ['OmitType(CreateArticleDto, [published_at])', OmitType(CreateArticleDto, ['published_at'] as const), ['author']],
      ['PickType(CreateCommentDto, [body, author])', PickType(CreateCommentDto, ['body', 'author'] as const), ['author']],
      ['CreateUserDto', CreateUserDto, ['email_verified_at']],
    ] as const)('knows the @ReadOnlyProperty() properties of %s, declared once on the base DTO', (_, dto, expected) => {
      expect([...readOnlyPropertiesOf(dto)].sort()).toEqual([...expected].sort());
    });

    it('drops the read-only properties of a PATCH body made with PartialType, and keeps them out of the instance', async () => {
      const result = (await pipe.transform({ user: 3, total_cents: 1, status: 'paid', id: 4 }, asBody(UpdateOrderDto))) as Record<string, unknown>;
      expect(result).toBeInstanceOf(UpdateOrderDto);
      expect({ ...result }).toEqual({ status: 'paid' });
      const article = (await pipe.transform({ author: 2, published_at: null, title: 'T' }, asBody(UpdateArticleDto))) as Record<string, unknown>;
      expect({ ...article }).toEqual({ title: 'T' });
    });
  });

  describe('mixed 400 and 422 problems', () => {
    it('answers 400 and lists every field, the 422 ones included', async () => {
      const error = await rejection({ ...USER, name: '', age: -1, email: 'x', extra: 1 }, CreateUserDto);
      expect(error.getStatus()).toBe(400);
      expect(error.code).toBe('bad_request');
      expect(error.message).toBe('4 fields are invalid');
      expect(error.details).toHaveLength(4);
      expect(error.details).toEqual(
        expect.arrayContaining([
          { field: 'name', message: 'name is required' },
          { field: 'extra', message: 'extra is not an accepted property' },
          { field: 'age', message: 'age must not be less than 0' },
          { field: 'email', message: 'email must be an email' },
        ]),
      );
    });

    it('lists the 400 problems before the 422 ones', async () => {
      const error = await rejection({ ...TODO_BODY, status: 'finished', content: 3 }, CreateTodoDto);
      expect(error.getStatus()).toBe(400);
      expect(error.details).toEqual([
        { field: 'content', message: 'content must be a string' },
        { field: 'status', message: 'status must be one of the following values: pending, in_progress, done' },
      ]);
    });
  });

  describe('PUT bodies (ReplaceUserDto)', () => {
    it('requires name', async () => {
      expectBadRequest(await rejection({ age: 3 }, ReplaceUserDto), 'name', 'name is required');
    });

    it('accepts a body without username and password', async () => {
      await expect(pipe.transform({ name: 'Ada' }, asBody(ReplaceUserDto))).resolves.toBeInstanceOf(ReplaceUserDto);
    });

    it.each(['username', 'password'])('rejects %s: null (omittable, not nullable)', async (field) => {
      expectBadRequest(await rejection({ name: 'Ada', [field]: null }, ReplaceUserDto), field, `${field} must be a string`);
    });

    it('still checks the password length', async () => {
      expectUnprocessable(
        await rejection({ name: 'Ada', password: 'short' }, ReplaceUserDto),
        'password',
        /^password must be longer than or equal to 8 characters$/,
      );
    });
  });

  describe('PATCH bodies (UpdateUserDto, UpdateTodoDto)', () => {
    it('accepts an empty body', async () => {
      const result = await pipe.transform({}, asBody(UpdateUserDto));
      expect(result).toBeInstanceOf(UpdateUserDto);
      expect({ ...(result as object) }).toEqual({});
    });

    it('accepts a subset of fields', async () => {
      const result = await pipe.transform({ age: 40 }, asBody(UpdateUserDto));
      expect({ ...(result as object) }).toEqual({ age: 40 });
    });

    it('rejects name: null (a required field cannot be cleared)', async () => {
      expectBadRequest(await rejection({ name: null }, UpdateUserDto), 'name', 'name is required');
    });

    it('rejects name: ""', async () => {
      expectBadRequest(await rejection({ name: '' }, UpdateUserDto), 'name', 'name is required');
    });

    it('accepts age: null and email: null (clearing optional fields)', async () => {
      const result = await pipe.transform({ age: null, email: null }, asBody(UpdateUserDto));
      expect({ ...(result as object) }).toEqual({ age: null, email: null });
    });

    it.each(['username', 'password', 'role'])('rejects %s: null', async (field) => {
      const error = await rejection({ [field]: null }, UpdateUserDto);
      expect(error.getStatus()).toBe(400);
      expect(error.details?.map((d) => d.field)).toEqual([field]);
    });

    it('still applies the value rules', async () => {
      expectUnprocessable(await rejection({ age: -1 }, UpdateUserDto), 'age', 'age must not be less than 0');
      expectUnprocessable(await rejection({ email: 'x' }, UpdateUserDto), 'email', 'email must be an email');
    });

    it('still rejects the wrong type and unknown properties', async () => {
      expectBadRequest(await rejection({ age: 'ten' }, UpdateUserDto), 'age', 'age must be an integer number');
      expectBadRequest(await rejection({ nickname: 'a' }, UpdateUserDto), 'nickname', 'nickname is not an accepted property');
    });

    it('drops the read-only properties', async () => {
      const result = await pipe.transform({ id: 1, created_at: 'x', updated_at: 'y', links: [], name: 'Ada' }, asBody(UpdateUserDto));
      expect({ ...(result as object) }).toEqual({ name: 'Ada' });
    });

    it('accepts {"status": "done"} on a todo and content: null', async () => {
      await expect(pipe.transform({ status: 'done' }, asBody(UpdateTodoDto))).resolves.toEqual(Object.assign(new UpdateTodoDto(), { status: 'done' }));
      const cleared = await pipe.transform({ content: null }, asBody(UpdateTodoDto));
      expect({ ...(cleared as object) }).toEqual({ content: null });
    });

    it('rejects title: null and a bad status on a todo', async () => {
      expectBadRequest(await rejection({ title: null }, UpdateTodoDto), 'title', 'title is required');
      expectUnprocessable(
        await rejection({ status: 'finished' }, UpdateTodoDto),
        'status',
        'status must be one of the following values: pending, in_progress, done',
      );
    });
  });
});
