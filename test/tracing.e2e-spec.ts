import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt, type ServerProcess, startServer } from './setup/server-process.js';

/**
 * OpenTelemetry traces of the real server process (docs/operations.md#traces: OpenTelemetry by the standard
 * `OTEL_*` variables; `traceparent` honoured, trace ids in logs). The built server runs as a
 * child process with the OTEL_* variables pointing at an OTLP/HTTP receiver in this test
 * (`POST /v1/traces`, protocol http/json), on the database of the run: SQLite, or PostgreSQL
 * (+ Redis) when DATABASE_URL (and REDIS_URL) say so.
 */

/** An OTLP/JSON attribute value: one of these keys is set. */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: AnyValue[] };
}

/** A span as OTLP/JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: AnyValue }[];
  status?: { code?: number };
  scope: string;
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

/** The plain value of a span attribute (numbers as numbers), or undefined. */
function attr(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

/** An OTLP/HTTP receiver on loopback: keeps every span it is sent, and the raw bodies. */
interface Receiver {
  url: string;
  spans: OtlpSpan[];
  bodies: string[];
  /** Resolves with the spans of `traceId` once `done(spans)` holds; rejects after `timeoutMs`. */
  waitFor(traceId: string, done: (spans: OtlpSpan[]) => boolean, timeoutMs?: number): Promise<OtlpSpan[]>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(404).end();
        return;
      }
      bodies.push(body);
      const payload = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { scope?: { name?: string }; spans?: Omit<OtlpSpan, 'scope'>[] }[] }[] };
      for (const resourceSpans of payload.resourceSpans ?? []) {
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) spans.push({ ...span, scope: scopeSpans.scope?.name ?? '' });
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    waitFor: async (traceId, done, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ofTrace = spans.filter((span) => span.traceId === traceId);
        if (done(ofTrace)) return ofTrace;
        if (Date.now() > deadline)
          throw new Error(`spans of trace ${traceId} not received within ${timeoutMs} ms; got ${JSON.stringify(ofTrace.map((s) => s.name))}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const postgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
const redis = postgres && Boolean(process.env.REDIS_URL);
/** The database of this run, as the DB spans must name it. */
const DB_SYSTEM = postgres ? 'postgresql' : 'sqlite';
/** The environment of the server: the run's database (a fresh SQLite file otherwise). */
const DATABASE_ENV: Record<string, string> = postgres
  ? { DATABASE_URL: process.env.DATABASE_URL!, ...(redis ? { REDIS_URL: process.env.REDIS_URL! } : {}) }
  : {};

/** The OTEL_* variables that point a server at `receiver`, batching every `delayMs`. */
function otelEnv(receiver: Receiver, delayMs = 100): Record<string, string> {
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: String(delayMs),
    OTEL_SERVICE_NAME: 'resource-api-e2e',
  };
}

const hex = (bytes: number) =>
  Array.from({ length: bytes }, () =>
    Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');
const PASSWORD = 'correct-horse-battery-staple';

/** A webhook receiver on loopback: answers 204 and keeps what it got. */
interface WebhookReceiver {
  url: string;
  received: { url: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookReceiver['received'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('OpenTelemetry traces of the real server (OTLP/HTTP receiver)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-tracing-'));
  let receiver: Receiver;
  let webhooks: WebhookReceiver;
  let server: ServerProcess;
  let token: string;
  let todoId: number;
  let webhookSecret = '';
  const username = `tracer_${process.pid}_${Date.now() % 100_000}`;

  beforeAll(async () => {
    ensureBuilt();
    receiver = await startReceiver();
    webhooks = await startWebhookReceiver();
    const deliverToLoopback = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' };
    server = await startServer(dir, { ...DATABASE_ENV, ...otelEnv(receiver), ...deliverToLoopback });
    const created = await request(server.url).post('/v1/users').send({ username, password: PASSWORD, name: 'Tracer' });
    expect(created.status).toBe(201);
    const login = await request(server.url).post('/v1/login').send({ username, password: PASSWORD });
    expect(login.status).toBe(200);
    token = login.body.token;
    const todo = await request(server.url).post('/v1/todos').set('Authorization', `Bearer ${token}`).send({ title: 'traced todo' });
    expect(todo.status).toBe(201);
    todoId = todo.body.id;
  }, 300_000);
  afterAll(async () => {
    await server?.kill();
    await receiver?.close();
    await webhooks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('continues the caller’s trace: one SERVER span named by the route template, with its status and a child span for each SQL statement', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const res = await request(server.url).get(`/v1/todos/${todoId}`).set('Authorization', `Bearer ${token}`).set('traceparent', `00-${traceId}-${parentId}-01`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(todoId);

    const spans = await receiver.waitFor(traceId, (of) => of.some((s) => s.kind === SPAN_KIND_SERVER));
    const servers = spans.filter((s) => s.kind === SPAN_KIND_SERVER);
    expect(servers).toHaveLength(1);
    const [root] = servers;
    expect(root.name).toBe('GET /v1/todos/{id}');
    expect(root.parentSpanId).toBe(parentId);
    expect(attr(root, 'http.route')).toBe('/v1/todos/{id}');
    expect(attr(root, 'http.request.method')).toBe('GET');
    expect(attr(root, 'http.response.status_code')).toBe(200);
    expect(attr(root, 'url.path')).toBe(`/v1/todos/${todoId}`);

    const statements = spans.filter((s) => attr(s, 'db.system.name') === DB_SYSTEM && attr(s, 'db.query.text') !== undefined);
    expect(statements.length).toBeGreaterThanOrEqual(1);
    for (const statement of statements) {
      expect(statement.kind).toBe(SPAN_KIND_CLIENT);
      // a child of the request's span, in its trace
      expect(statement.parentSpanId).toBe(root.spanId);
      expect(statement.name).toBe(
        `${attr(statement, 'db.operation.name')}${attr(statement, 'db.collection.name') ? ` ${attr(statement, 'db.collection.name')}` : ''}`,
      );
    }
    const read = statements.find((s) => s.name === 'SELECT todos');
    expect(read).toBeDefined();
    expect(String(attr(read!, 'db.query.text'))).toMatch(/^SELECT .* FROM "todos"/s);
    if (redis) {
      // Redis commands are spans too, named by the command alone: keys can hold session ids
      const commands = spans.filter((s) => attr(s, 'db.system.name') === 'redis');
      expect(commands.length).toBeGreaterThanOrEqual(1);
      for (const command of commands) expect(attr(command, 'db.query.text')).toBe(command.name);
    }
  });

  it('writes the trace id and the server span id on the request’s log line', async () => {
    const traceId = hex(16);
    const res = await request(server.url)
      .get(`/v1/todos/${todoId}`)
      .set('Authorization', `Bearer ${token}`)
      .set('traceparent', `00-${traceId}-${hex(8)}-01`)
      .set('X-Request-Id', `trace-log-${traceId}`);
    expect(res.status).toBe(200);
    const [root] = await receiver
      .waitFor(traceId, (of) => of.some((s) => s.kind === SPAN_KIND_SERVER))
      .then((of) => of.filter((s) => s.kind === SPAN_KIND_SERVER));
    await server.waitForOutput(`trace-log-${traceId}`);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes(`trace-log-${traceId}`))
      .map((line) => JSON.parse(line) as { trace_id?: string; span_id?: string; req?: { id?: string } });
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines) {
      expect(line.trace_id).toBe(traceId);
      expect(line.span_id).toBe(root.spanId);
    }
  });

  it('names a span of a request no route took by its method alone, and one of a create by its route (201, an INSERT)', async () => {
    const missingTrace = hex(16);
    const missing = await request(server.url)
      .get(`/v1/no-such-things/${todoId}`)
      .set('traceparent', `00-${missingTrace}-${hex(8)}-01`);
    expect(missing.status).toBe(404);
    const [notFound] = (await receiver.waitFor(missingTrace, (of) => of.some((s) => s.kind === SPAN_KIND_SERVER))).filter((s) => s.kind === SPAN_KIND_SERVER);
    expect(notFound.name).toBe('GET');
    expect(attr(notFound, 'http.route')).toBeUndefined();
    expect(attr(notFound, 'http.response.status_code')).toBe(404);

    const createTrace = hex(16);
    const created = await request(server.url)
      .post('/v1/todos')
      .set('Authorization', `Bearer ${token}`)
      .set('traceparent', `00-${createTrace}-${hex(8)}-01`)
      .send({ title: 'second traced todo' });
    expect(created.status).toBe(201);
    const spans = await receiver.waitFor(createTrace, (of) => of.some((s) => s.kind === SPAN_KIND_SERVER));
    const [root] = spans.filter((s) => s.kind === SPAN_KIND_SERVER);
    expect(root.name).toBe('POST /v1/todos');
    expect(attr(root, 'http.response.status_code')).toBe(201);
    const insert = spans.find((s) => s.name === 'INSERT todos');
    expect(insert).toBeDefined();
    expect(insert!.parentSpanId).toBe(root.spanId);
    // parameters are placeholders: the title never reaches a span
    expect(JSON.stringify(spans)).not.toContain('second traced todo');
  });

  it('starts a new trace without traceparent, redacts secret-named query parameters, and traces no health probe', async () => {
    const before = receiver.spans.length;
    const probe = await request(server.url).get('/health/live');
    expect(probe.status).toBe(200);
    const refused = await request(server.url).get('/v1/todos?access_token=hunter2-secret-value');
    expect(refused.status).toBe(400);
    let span: OtlpSpan | undefined;
    const deadline = Date.now() + 15_000;
    while (!span && Date.now() < deadline) {
      span = receiver.spans.slice(before).find((s) => s.kind === SPAN_KIND_SERVER && attr(s, 'url.path') === '/v1/todos');
      if (!span) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(span).toBeDefined();
    expect(span!.parentSpanId ?? '').toBe('');
    expect(attr(span!, 'url.query')).toBe('access_token=[REDACTED]');
    expect(attr(span!, 'http.response.status_code')).toBe(400);
    expect(receiver.spans.slice(before).some((s) => String(attr(s, 'url.path')).startsWith('/health'))).toBe(false);
  });

  it('continues the trace of a write in its webhook delivery: the receiver gets a traceparent of that trace, the CLIENT span "webhook delivery" under the request’s span, no URL path or query in it', async () => {
    const hook = await request(server.url)
      .post('/v1/webhooks')
      .set('Authorization', `Bearer ${token}`)
      .send({ url: `${webhooks.url}/hooks/traced?token=receiver-secret-4711`, events: ['todo.created'] });
    expect(hook.status).toBe(201);
    webhookSecret = hook.body.secret;
    const traceId = hex(16);
    const created = await request(server.url)
      .post('/v1/todos')
      .set('Authorization', `Bearer ${token}`)
      .set('traceparent', `00-${traceId}-${hex(8)}-01`)
      .send({ title: 'delivered traced todo' });
    expect(created.status).toBe(201);

    const deadline = Date.now() + 15_000;
    let delivery: WebhookReceiver['received'][number] | undefined;
    while (!delivery && Date.now() < deadline) {
      delivery = webhooks.received.find(
        (entry) => entry.url.startsWith('/hooks/traced') && (JSON.parse(entry.body) as { data?: { id?: number } }).data?.id === created.body.id,
      );
      if (!delivery) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(delivery).toBeDefined();
    const [, deliveredTrace, deliverySpanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(delivery!.headers.traceparent)) ?? [];
    expect(deliveredTrace).toBe(traceId);

    const spans = await receiver.waitFor(traceId, (of) => of.some((s) => s.spanId === deliverySpanId) && of.some((s) => s.kind === SPAN_KIND_SERVER));
    const [root] = spans.filter((s) => s.kind === SPAN_KIND_SERVER);
    expect(root.name).toBe('POST /v1/todos');
    const span = spans.find((s) => s.spanId === deliverySpanId)!;
    expect(span.name).toBe('webhook delivery');
    expect(span.kind).toBe(SPAN_KIND_CLIENT);
    // written by the request: a child of its server span
    expect(span.parentSpanId).toBe(root.spanId);
    expect(attr(span, 'http.request.method')).toBe('POST');
    expect(attr(span, 'http.response.status_code')).toBe(204);
    expect(attr(span, 'server.address')).toBe('127.0.0.1');
    expect(attr(span, 'server.port')).toBe(Number(new URL(webhooks.url).port));
    expect(attr(span, 'messaging.message.id')).toBe(delivery!.headers['webhook-id']);
    expect(attr(span, 'resource_api.event.type')).toBe('todo.created');
    expect(attr(span, 'resource_api.webhook.id')).toBe(hook.body.id);
    expect(attr(span, 'resource_api.webhook.delivery.attempt')).toBe(1);
    expect(span.status?.code ?? 0).not.toBe(2); // not ERROR
    // the receiver's URL (its path and query can carry its secrets) is in no span
    expect(receiver.bodies.join('\n')).not.toContain('receiver-secret-4711');
    expect(receiver.bodies.join('\n')).not.toContain('/hooks/traced');
  });

  it('exports no secret: no token, password or password hash in any span or resource', async () => {
    const everything = receiver.bodies.join('\n');
    expect(everything.length).toBeGreaterThan(0);
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain('hunter2-secret-value');
    expect(everything).not.toMatch(/\$argon2/);
    expect(webhookSecret).toMatch(/^whsec_/);
    expect(everything).not.toContain(webhookSecret.slice(6));
    expect(everything).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./);
    // the log carries no token either
    expect(server.output()).not.toContain(token);
  });
});

describe('tracing start and stop', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-tracing-off-'));
  /** A module for `--import` that makes every import of an OpenTelemetry package (and of the loader hook it registers) fail. */
  const refuser = path.join(dir, 'refuse-opentelemetry.mjs');
  let receiver: Receiver;

  beforeAll(async () => {
    ensureBuilt();
    receiver = await startReceiver();
    const hooks = `export async function resolve(specifier, context, next) {
  if (/^(@opentelemetry\\/|import-in-the-middle)/.test(specifier)) throw new Error('refused to load ' + specifier);
  return next(specifier, context);
}`;
    writeFileSync(refuser, `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});\n`);
  }, 300_000);
  afterAll(async () => {
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const refusing = () => ({ NODE_OPTIONS: `--import=${pathToFileURL(refuser).href}` });

  it('off loads no OpenTelemetry module: without OTEL_* and with OTEL_SDK_DISABLED=true the server runs with every OpenTelemetry import refused; on, it cannot', async () => {
    const [plain, disabled, on] = await Promise.allSettled([
      startServer(path.join(dir, 'plain'), { ...refusing() }),
      startServer(path.join(dir, 'disabled'), { ...refusing(), ...otelEnv(receiver), OTEL_SDK_DISABLED: 'true' }),
      startServer(path.join(dir, 'on'), { ...refusing(), ...otelEnv(receiver) }),
    ]);
    try {
      for (const started of [plain, disabled]) {
        expect(started.status).toBe('fulfilled');
        const server = (started as PromiseFulfilledResult<ServerProcess>).value;
        const res = await request(server.url)
          .get('/v1/todos')
          .set('traceparent', `00-${hex(16)}-${hex(8)}-01`);
        expect(res.status).toBe(401);
        expect(server.output()).not.toMatch(/"trace_id"/);
      }
      // the refusal works: the same server with tracing on fails at its first OpenTelemetry import
      expect(on.status).toBe('rejected');
      expect(String((on as PromiseRejectedResult).reason)).toMatch(/resource-api failed to start: refused to load (@opentelemetry\/|import-in-the-middle)/);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.spans).toHaveLength(0);
    } finally {
      for (const started of [plain, disabled, on]) if (started.status === 'fulfilled') await started.value.kill();
    }
  });

  it('on SIGTERM, exports the spans still buffered before the process exits 0', async () => {
    // batches every 60 s: only the shutdown can have exported the span
    const server = await startServer(path.join(dir, 'sigterm'), { ...DATABASE_ENV, ...otelEnv(receiver, 60_000) });
    try {
      const traceId = hex(16);
      const res = await request(server.url)
        .get('/v1/todos')
        .set('traceparent', `00-${traceId}-${hex(8)}-01`);
      expect(res.status).toBe(401);
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      const [root] = receiver.spans.filter((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER);
      expect(root?.name).toBe('GET /v1/todos');
      expect(attr(root, 'http.response.status_code')).toBe(401);
    } finally {
      await server.kill();
    }
  });

  it('refuses a bad OTEL_* value at start-up with one line naming the variable', async () => {
    await expect(startServer(path.join(dir, 'bad'), { OTEL_TRACES_EXPORTER: 'jaeger' })).rejects.toThrow(
      /resource-api failed to start: Invalid configuration: OTEL_TRACES_EXPORTER must be a comma-separated list of otlp, zipkin, console, none \(got "jaeger"\)/,
    );
  });
});
