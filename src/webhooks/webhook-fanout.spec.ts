import { describe, expect, it, jest } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import type { StoredEvent } from '../events/event-outbox.js';
import { WebhookFanout } from './webhook-fanout.js';
import type { WebhookWorker } from './webhook-worker.js';
import { deliverySpanAttributes } from './webhook-worker.js';

/** A StoredEvent of `type` for `ownerId`. */
function event(type: StoredEvent['type'], ownerId: number | null): StoredEvent {
  return { seq: 1, id: `evt_${'a'.repeat(32)}`, type, ownerId, resourceId: 1, createdAt: new Date(), data: { v1: {}, v2: {} } };
}

/** An entity manager whose transaction's query runner answers every statement with `affected` rows, recording the calls. */
function managerAffecting(affected: number, type: 'sqlite' | 'postgres' = 'sqlite') {
  const query = jest.fn(async (_sql: string, _params?: unknown[], _structured?: boolean) => ({ affected, records: [] }));
  const manager = { connection: { options: { type } }, queryRunner: { query } } as unknown as EntityManager;
  return { manager, query };
}

describe('WebhookFanout (the outbox listener that makes deliveries)', () => {
  it('inserts the deliveries in the writing transaction with one parameterised statement (type as a quoted LIKE pattern, no owner → -1)', async () => {
    const wake = jest.fn();
    const fanout = new WebhookFanout({ wake } as unknown as WebhookWorker);
    const { manager, query } = managerAffecting(0, 'postgres');
    await fanout.inTransaction(manager, event('todo.created', null));
    expect(query).toHaveBeenCalledTimes(1);
    const [sql, params, structured] = query.mock.calls[0];
    expect(sql).toMatch(/^INSERT INTO webhook_deliveries .* SELECT w\.id, \$1, \$2, 'pending', 0, \$3, \$4/s);
    expect(params).toEqual([`evt_${'a'.repeat(32)}`, 'todo.created', expect.any(Date), expect.any(Date), -1, '%"todo.created"%']);
    expect(structured).toBe(true);
  });

  it('on PostgreSQL, a transaction that inserted deliveries also runs NOTIFY resource_api_webhooks (delivered to the listening workers at its commit); none without deliveries', async () => {
    const fanout = new WebhookFanout({ wake: jest.fn() } as unknown as WebhookWorker);
    const heard = managerAffecting(2, 'postgres');
    await fanout.inTransaction(heard.manager, event('todo.created', 7));
    expect(heard.query.mock.calls.map(([sql]) => sql)).toEqual([expect.stringMatching(/^INSERT INTO webhook_deliveries/), 'NOTIFY resource_api_webhooks']);
    const unheard = managerAffecting(0, 'postgres');
    await fanout.inTransaction(unheard.manager, event('todo.created', 7));
    expect(unheard.query).toHaveBeenCalledTimes(1);
    const sqlite = managerAffecting(2, 'sqlite');
    await fanout.inTransaction(sqlite.manager, event('todo.created', 7));
    expect(sqlite.query).toHaveBeenCalledTimes(1);
  });

  it('wakes the worker after the commit only when the fan-out inserted deliveries: a write no webhook listens to costs no claim transaction', async () => {
    const wake = jest.fn();
    const fanout = new WebhookFanout({ wake } as unknown as WebhookWorker);
    const unheard = event('todo.updated', 7);
    await fanout.inTransaction(managerAffecting(0).manager, unheard);
    fanout.afterCommit([unheard]);
    expect(wake).not.toHaveBeenCalled();

    const heard = event('todo.created', 7);
    await fanout.inTransaction(managerAffecting(2).manager, heard);
    fanout.afterCommit([unheard, heard]);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('folds the same INSERT into the outbox statement on PostgreSQL: placeholders from the outbox, NOTIFY as a channel, a wake only after rows were written', () => {
    const wake = jest.fn();
    const fanout = new WebhookFanout({ wake } as unknown as WebhookWorker);
    const params: unknown[] = ['event', 'columns'];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const unheard = event('todo.updated', null);
    const write = fanout.folded(unheard, param);
    expect(write.sql).toMatch(/^INSERT INTO webhook_deliveries .* SELECT w\.id, \$3, \$4, 'pending', 0, \$5, \$6\s.*w\.owner_id = \$7 .* LIKE \$8\)$/s);
    expect(params.slice(2)).toEqual([`evt_${'a'.repeat(32)}`, 'todo.updated', expect.any(Date), expect.any(Date), -1, '%"todo.updated"%']);
    expect(write.notify).toBe('resource_api_webhooks');
    write.settled(0);
    fanout.afterCommit([unheard]);
    expect(wake).not.toHaveBeenCalled();

    const heard = event('todo.created', 7);
    fanout.folded(heard, param).settled(2);
    fanout.afterCommit([unheard, heard]);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('refuses a manager outside a transaction (no query runner): a programming error', async () => {
    const fanout = new WebhookFanout({ wake: jest.fn() } as unknown as WebhookWorker);
    const manager = { connection: { options: { type: 'sqlite' } } } as unknown as EntityManager;
    await expect(fanout.inTransaction(manager, event('todo.created', 1))).rejects.toThrow(/needs the entity manager of a transaction/);
  });
});

describe('deliverySpanAttributes (the attempt span: no URL path or query)', () => {
  const claimed = { id: 12, subscriptionId: 3, attempts: 2, eventId: `evt_${'b'.repeat(32)}` };

  it('names the server by host and port (default ports by scheme) and the webhook, delivery, attempt and event', () => {
    expect(deliverySpanAttributes({ ...claimed, url: 'https://hooks.example.com/in/secret-path?token=hunter2' }, 'order.paid')).toEqual({
      'http.request.method': 'POST',
      'messaging.message.id': claimed.eventId,
      'resource_api.event.type': 'order.paid',
      'resource_api.webhook.id': 3,
      'resource_api.webhook.delivery.id': 12,
      'resource_api.webhook.delivery.attempt': 2,
      'server.address': 'hooks.example.com',
      'server.port': 443,
    });
    expect(deliverySpanAttributes({ ...claimed, url: 'http://127.0.0.1:8080/x' }, 'todo.created')).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': 8080,
    });
    expect(deliverySpanAttributes({ ...claimed, url: 'http://[::1]/x' }, 'todo.created')).toMatchObject({ 'server.address': '[::1]', 'server.port': 80 });
  });

  it('carries nothing of the path, query or credentials; an unparsable URL gives no server attributes', () => {
    const text = JSON.stringify(
      deliverySpanAttributes({ ...claimed, url: 'https://user:pass@hooks.example.com/in/secret-path?token=hunter2' }, 'todo.created'),
    );
    for (const secret of ['secret-path', 'hunter2', 'user', 'pass']) expect(text).not.toContain(secret);
    const broken = deliverySpanAttributes({ ...claimed, url: 'not a url\u0000' }, 'todo.created');
    expect(broken).not.toHaveProperty('server.address');
    expect(broken).not.toHaveProperty('server.port');
  });
});
