import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import Database from 'better-sqlite3';
import { BetterSqlite3Instrumentation } from './sqlite-instrumentation.js';

describe('BetterSqlite3Instrumentation (a span per SQLite statement)', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const instrumentation = new BetterSqlite3Instrumentation();
  const [definition] = instrumentation.getModuleDefinitions();
  let db: InstanceType<typeof Database>;

  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    instrumentation.setTracerProvider(provider);
    definition.patch!(Database, '13.2.0');
    db = new Database(':memory:');
    db.exec('CREATE TABLE todos (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE)');
  });
  afterAll(async () => {
    db.close();
    definition.unpatch!(Database, '13.2.0');
    instrumentation.disable();
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  /** Runs `work` inside an active span, as a traced request does; returns that span's id. */
  function inRequest(work: () => void): string {
    const parent = provider.getTracer('test').startSpan('GET /v1/todos');
    context.with(trace.setSpan(context.active(), parent), work);
    parent.end();
    return parent.spanContext().spanId;
  }

  it('makes a CLIENT span per statement executed (run, get, all, exec), a child of the active span, with the statement’s text and no value', () => {
    const parentId = inRequest(() => {
      const insert = db.prepare('INSERT INTO todos (title) VALUES (?)');
      insert.run('secret title one');
      insert.run('secret title two');
      db.prepare('SELECT id, title FROM todos WHERE id = ?').get(1);
      db.prepare('SELECT count(*) AS n FROM todos').all();
      db.exec('DELETE FROM todos WHERE id = 2');
    });
    const spans = exporter.getFinishedSpans().filter((s) => s.name !== 'GET /v1/todos');
    expect(spans.map((s) => s.name)).toEqual(['INSERT todos', 'INSERT todos', 'SELECT todos', 'SELECT todos', 'DELETE todos']);
    for (const span of spans) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.parentSpanContext?.spanId).toBe(parentId);
      expect(span.attributes['db.system.name']).toBe('sqlite');
      expect(span.attributes['db.collection.name']).toBe('todos');
      expect(JSON.stringify(span.attributes)).not.toContain('secret title');
    }
    expect(spans[0].attributes['db.query.text']).toBe('INSERT INTO todos (title) VALUES (?)');
    expect(spans[0].attributes['db.operation.name']).toBe('INSERT');
  });

  it('returns what the statement returns, and makes no span outside a traced operation', () => {
    const row = db.prepare('SELECT title FROM todos WHERE id = ?').get(1) as { title: string };
    expect(row.title).toBe('secret title one');
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('marks a failing statement’s span as an error with its SQLite code, and rethrows the same error', () => {
    let thrown: unknown;
    inRequest(() => {
      try {
        db.prepare('INSERT INTO todos (title) VALUES (?)').run('secret title one');
      } catch (error) {
        thrown = error;
      }
    });
    expect((thrown as { code?: string }).code).toBe('SQLITE_CONSTRAINT_UNIQUE');
    const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'INSERT todos');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes['error.type']).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(span.events.map((e) => e.name)).toEqual(['exception']);
  });
});
