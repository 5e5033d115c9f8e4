import { describe, expect, it } from '@jest/globals';
import { derivedOperationId } from './operation-ids.js';

describe('derivedOperationId (operation ids from the declaration and the operation kind)', () => {
  it.each([
    ['get', '/v2/todos', 'todos', 'listTodos'],
    ['post', '/v1/todos', 'todos', 'createTodo'],
    ['get', '/v2/todos/{id}', 'todos', 'getTodo'],
    ['put', '/v2/todos/{id}', 'todos', 'replaceTodo'],
    ['patch', '/v2/todos/{id}', 'todos', 'updateTodo'],
    ['delete', '/v2/todos/{id}', 'todos', 'deleteTodo'],
    ['get', '/v2/articles/{id}/comments/{comment_id}', 'comments', 'getComment'],
    ['get', '/v2/webhooks/{id}/deliveries', 'webhook-deliveries', 'listWebhookDeliveries'],
    ['get', '/v2/webhooks/{id}/deliveries/{delivery_id}', 'webhook-deliveries', 'getWebhookDelivery'],
    ['post', '/v2/webhooks/{id}/redeliveries', 'webhook-deliveries', 'createWebhookRedelivery'],
    ['post', '/v2/webhooks/{id}/secret-rotations', 'webhooks', 'createWebhookSecretRotation'],
    ['get', '/v2/oauth-clients', 'oauth-clients', 'listOAuthClients'],
    ['delete', '/v2/api-keys/{id}', 'api-keys', 'deleteApiKey'],
    ['get', '/v2/sessions/current', 'sessions', undefined],
    ['post', '/v2/login', 'auth', undefined],
    ['delete', '/v2/todos', 'todos', undefined],
    ['get', '/', 'root', undefined],
  ])('%s %s (%s) → %s', (method, path, tag, id) => {
    expect(derivedOperationId(method, path, tag)).toBe(id);
  });
});
