import { describe, expect, it } from '@jest/globals';
import { SetMetadata } from '@nestjs/common';
import { type ModulesContainer, Reflector } from '@nestjs/core';
import { fakeRequest, httpContext } from '../../../test/unit/http-context.js';
import { ApiException } from '../../common/errors/api-exception.js';
import type { AuthUser } from '../../common/caller/auth-user.js';
import { ResourceRegistry } from '../../common/resources/resource-registry.js';
import { REGISTRY } from '../../resources.js';
// the metadata keys where the decorators define them: the scope resource is set directly, so these
// tests do not depend on the name of the controller decorator that sets it
import { REQUIRED_ROLES, REQUIRED_SCOPE, SCOPE_RESOURCE } from '../decorators/auth.decorators.js';
import { RolesGuard } from './roles.guard.js';
import { ScopeGuard } from './scope.guard.js';

/** The ApiException `run` throws (fails the test when it throws nothing or something else). */
function refusal(run: () => unknown): ApiException {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiException);
    return error as ApiException;
  }
  throw new Error('expected an ApiException, nothing was thrown');
}

@SetMetadata(SCOPE_RESOURCE, 'todos')
class TodosController {
  list() {}
  create() {}
  @SetMetadata(REQUIRED_SCOPE, 'users:write')
  explicit() {}
  @SetMetadata(REQUIRED_SCOPE, null)
  keysOnly() {}
}

class UndeclaredController {
  anything() {}
}

@SetMetadata(REQUIRED_ROLES, ['admin'])
class AdminController {
  everything() {}
  @SetMetadata(REQUIRED_ROLES, ['user', 'admin'])
  anyone() {}
}

class OpenController {
  open() {}
}

const apiKey = (scopes: string[]): AuthUser => ({ id: 1, role: 'user', scheme: 'api_key', scopes, apiKeyId: 9 });
const oauth = (scopes: string[]): AuthUser => ({ id: 1, role: 'user', scheme: 'bearer', scopes, clientId: 'app' });

describe('ScopeGuard (docs/authentication.md#roles-and-scopes: a scoped credential without the scope → 403)', () => {
  const check = (method: string, user: AuthUser | undefined, controller: Function, handler: string) =>
    new ScopeGuard(new Reflector()).canActivate(httpContext(fakeRequest(method, '/v1/todos', { user }), undefined, controller as never, handler));

  it('lets callers with their full rights through (bearer, session, or no user yet)', () => {
    expect(check('POST', { id: 1, role: 'user', scheme: 'bearer' }, TodosController, 'create')).toBe(true);
    expect(check('DELETE', { id: 1, role: 'user', scheme: 'session' }, UndeclaredController, 'anything')).toBe(true);
    expect(check('GET', undefined, TodosController, 'list')).toBe(true);
  });

  it("needs <resource>:read for GET and HEAD and <resource>:write otherwise, from the controller's resource", () => {
    expect(check('GET', apiKey(['todos:read']), TodosController, 'list')).toBe(true);
    expect(check('HEAD', apiKey(['todos:read']), TodosController, 'list')).toBe(true);
    expect(refusal(() => check('HEAD', apiKey(['todos:write']), TodosController, 'list')).message).toBe('missing scope todos:read');
    const error = refusal(() => check('POST', apiKey(['todos:read']), TodosController, 'create'));
    expect(error.getStatus()).toBe(403);
    expect(error.message).toBe('missing scope todos:write');
    expect(check('POST', apiKey(['todos:write']), TodosController, 'create')).toBe(true);
  });

  it("applies an OAuth token's scopes exactly like an API key's", () => {
    expect(refusal(() => check('POST', oauth(['todos:read']), TodosController, 'create')).message).toBe('missing scope todos:write');
  });

  it('lets an explicit scope on the operation override the resource', () => {
    expect(refusal(() => check('GET', apiKey(['todos:read', 'todos:write']), TodosController, 'explicit')).message).toBe('missing scope users:write');
    expect(check('GET', apiKey(['users:write']), TodosController, 'explicit')).toBe(true);
  });

  it('refuses scoped credentials on an operation that declares no scope or `null`, naming the credential', () => {
    expect(refusal(() => check('GET', apiKey(['todos:read']), UndeclaredController, 'anything')).message).toBe('API keys cannot use this operation');
    expect(refusal(() => check('GET', oauth(['todos:read', 'todos:write']), TodosController, 'keysOnly')).message).toBe(
      'OAuth access tokens cannot use this operation',
    );
    expect(check('GET', { id: 1, role: 'admin', scheme: 'bearer' }, TodosController, 'keysOnly')).toBe(true);
  });
});

describe('RolesGuard (docs/authentication.md#roles-and-scopes: the role an operation needs → else 403)', () => {
  const check = (user: AuthUser | undefined, controller: Function, handler: string) =>
    new RolesGuard(new Reflector()).canActivate(httpContext(fakeRequest('GET', '/v1/users', { user }), undefined, controller as never, handler));

  it('lets anyone through an operation without @Roles', () => {
    expect(check({ id: 1, role: 'user' }, OpenController, 'open')).toBe(true);
    expect(check(undefined, OpenController, 'open')).toBe(true);
  });

  it("needs one of the controller's roles, naming them in the 403", () => {
    expect(check({ id: 1, role: 'admin' }, AdminController, 'everything')).toBe(true);
    const error = refusal(() => check({ id: 2, role: 'user' }, AdminController, 'everything'));
    expect(error.getStatus()).toBe(403);
    expect(error.code).toBe('forbidden');
    expect(error.message).toBe('this operation needs the admin role');
  });

  it('refuses a caller without a user (403, not a crash) and lets the operation override the controller', () => {
    expect(refusal(() => check(undefined, AdminController, 'everything')).getStatus()).toBe(403);
    expect(check({ id: 2, role: 'user' }, AdminController, 'anyone')).toBe(true);
  });
});

describe('ScopeGuard at start-up', () => {
  /** The modules container of an application whose one module has `controllers`. */
  const modulesOf = (...controllers: Function[]) =>
    new Map([['module', { controllers: new Map(controllers.map((metatype) => [metatype, { metatype }])) }]]) as unknown as ModulesContainer;

  @SetMetadata(SCOPE_RESOURCE, 'gadgets')
  class GadgetsController {
    list() {}
  }

  it('accepts controllers naming declared scopes', () => {
    expect(() => new ScopeGuard(new Reflector(), REGISTRY, modulesOf(TodosController, UndeclaredController)).onApplicationBootstrap()).not.toThrow();
  });

  it('refuses a controller naming a collection no declaration has with scopes, or an undeclared scope', () => {
    expect(() => new ScopeGuard(new Reflector(), REGISTRY, modulesOf(GadgetsController)).onApplicationBootstrap()).toThrow(
      'GadgetsController: scope gadgets:read is not declared',
    );
    const withoutUsers = new ResourceRegistry(REGISTRY.resources.filter((resource) => resource.name !== 'users'));
    expect(() => new ScopeGuard(new Reflector(), withoutUsers, modulesOf(TodosController)).onApplicationBootstrap()).toThrow(
      'TodosController: scope users:write is not declared',
    );
  });
});
