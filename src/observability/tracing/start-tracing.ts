import { IncomingMessage } from 'node:http';
import { formatTraceparent, installTraceContext, parseTraceparent } from './trace-context.js';

/**
 * The modules the instrumentations patch that the application may `import` as ES modules (the
 * Redis store imports `ioredis`; `http` and `https` from everywhere). `require`d modules (pg,
 * better-sqlite3, and what CommonJS packages require) are patched through require hooks.
 */
const ESM_IMPORTED = ['ioredis', 'pg', 'pg-pool', 'http', 'https', 'node:http', 'node:https'];

/** Paths whose requests are not traced: the probes and the metrics scrape, asked every few seconds. */
const UNTRACED_PATH = /^\/(health\/|metrics(\/|\?|$))/;

/**
 * Registers import-in-the-middle's synchronous in-thread hooks (Node 22.22.3+ and 24.11.1+, so every
 * supported Node), so that the instrumentations also patch the modules in {@link ESM_IMPORTED} that
 * the application imports as ES modules (ES imports bypass `require`, where the instrumentations
 * otherwise hook). Must run before those modules are first loaded.
 * @throws Error when this Node.js has no synchronous module hooks (older than `engines` allows).
 */
async function registerEsmHooks(): Promise<void> {
  const { supportsSyncHooks, register } = await import('import-in-the-middle/register-hooks.mjs');
  if (!supportsSyncHooks()) throw new Error(`tracing needs synchronous module hooks (Node.js 22.22.3+ or 24.15+), this is ${process.version}`);
  register({ include: ESM_IMPORTED });
}

/**
 * Starts OpenTelemetry tracing (docs/operations.md#traces: configured by the standard `OTEL_*`
 * variables; `traceparent` honoured; trace ids in the logs). main.ts calls it when `env.TRACING` is true and
 * BEFORE it imports the application, since the instrumentations patch modules as they load.
 *
 * The OpenTelemetry Node SDK reads the standard variables (exporter, endpoint, protocol, headers,
 * sampler, `OTEL_BSP_*` batching, resource attributes, propagators: W3C trace context and baggage
 * by default). This service exports traces only: `OTEL_METRICS_EXPORTER` and `OTEL_LOGS_EXPORTER`
 * are ignored (metrics are served at /metrics, logs are the JSON lines on stdout). The service
 * name is `resource-api` unless `OTEL_SERVICE_NAME` or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`
 * says otherwise (`raw`: the environment main.ts validated).
 *
 * Instrumented: incoming HTTP (one SERVER span per request, named `METHOD /route/{template}` with
 * `http.route`, or the method alone when no route took it; the caller's `traceparent` is its
 * parent; the query's secret-named parameters redacted as in the logs; /health/* and /metrics not
 * traced); PostgreSQL (pg: a span per statement, named like `SELECT todos`, its text without
 * values, and the pool's connects); SQLite (a span per statement, {@link BetterSqlite3Instrumentation});
 * Redis (ioredis: a span per command, its name only — keys can hold session ids). Database and
 * Redis spans are made inside traced requests only. Outgoing HTTP is not
 * instrumented: it is webhook deliveries, whose span the worker makes (`inSpan` of trace-context.ts), continuing
 * the trace of the request that wrote the event. Express's instrumentation is not used: under
 * Nest on Express 5 it adds a dozen spans per request for Nest's middleware routes (named
 * `middleware - <anonymous>` or `request handler`) and takes the catch-all middleware route for the
 * route of a request no controller took; the server span's route comes from the controller route
 * Express dispatched to instead (see http-route.ts).
 *
 * Installs the trace context the rest of the service uses (log ids, `injectTraceContext`,
 * shutdown, see trace-context.ts). @throws whatever the SDK throws while starting (main.ts turns it
 * into a one-line start-up error).
 */
export async function startTracing(raw: Record<string, unknown>): Promise<void> {
  await registerEsmHooks();
  const [
    api,
    { NodeSDK },
    { HttpInstrumentation },
    { PgInstrumentation },
    { IORedisInstrumentation },
    { BetterSqlite3Instrumentation },
    { serverSpanDetails },
    { summarizeSql },
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('./sqlite-instrumentation.js'),
    import('./http-route.js'),
    import('./sql-summary.js'),
  ]);
  // loaded once tracing is set up: logging.ts is where the service's redaction rules live
  const redaction: { redactUrl?: (url: string) => string } = {};

  const named = typeof raw.OTEL_SERVICE_NAME === 'string' && raw.OTEL_SERVICE_NAME.trim() !== '';
  const namedByAttributes = typeof raw.OTEL_RESOURCE_ATTRIBUTES === 'string' && /(^|,)\s*service\.name\s*=/.test(raw.OTEL_RESOURCE_ATTRIBUTES);
  const sdk = new NodeSDK({
    serviceName: named || namedByAttributes ? undefined : 'resource-api',
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATH.test(req.url ?? ''),
        // the service's outgoing requests are webhook deliveries: the worker makes their span itself
        // (inSpan), without the URL's path and query, which can carry the receiver's secrets
        ignoreOutgoingRequestHook: () => true,
        applyCustomAttributesOnSpan: (span, request) => {
          const { redactUrl } = redaction;
          if (!(request instanceof IncomingMessage) || !redactUrl) return; // an outgoing request's span
          const { name, attributes } = serverSpanDetails(request, redactUrl);
          if (name !== undefined) span.updateName(name);
          span.setAttributes(attributes);
        },
      }),
      new PgInstrumentation({
        requireParentSpan: true,
        // named by the statement (`SELECT todos`), not by the prepared statement's name (`pg.query:ra3 <db>`)
        requestHook: (span, { query }) => {
          const { name, operation, table } = summarizeSql(query.text);
          span.updateName(name);
          span.setAttribute('db.operation.name', operation);
          if (table) span.setAttribute('db.collection.name', table);
        },
      }),
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
      new BetterSqlite3Instrumentation(),
    ],
  });
  sdk.start();
  redaction.redactUrl = (await import('../../logging/logging.js')).redactUrl;

  const tracer = api.trace.getTracer('resource-api');
  const kinds = { client: api.SpanKind.CLIENT, producer: api.SpanKind.PRODUCER, internal: api.SpanKind.INTERNAL };
  installTraceContext({
    inject: (headers) => api.propagation.inject(api.context.active(), headers),
    traceparent: () => {
      const spanContext = api.trace.getSpan(api.context.active())?.spanContext();
      return spanContext && api.isSpanContextValid(spanContext) ? formatTraceparent(spanContext) : undefined;
    },
    inSpan: (name, options, work) => {
      const parent = options.parent ? parseTraceparent(options.parent) : undefined;
      const parentContext = parent ? api.trace.setSpanContext(api.ROOT_CONTEXT, { ...parent, isRemote: true }) : api.ROOT_CONTEXT;
      return tracer.startActiveSpan(name, { kind: kinds[options.kind], attributes: options.attributes }, parentContext, async (span) => {
        try {
          return await work({
            setAttributes: (attributes) => span.setAttributes(attributes),
            fail: (message) => span.setStatus({ code: api.SpanStatusCode.ERROR, message }),
          });
        } catch (error) {
          span.setStatus({ code: api.SpanStatusCode.ERROR });
          throw error;
        } finally {
          span.end();
        }
      });
    },
    logFields: () => {
      const spanContext = api.trace.getSpan(api.context.active())?.spanContext();
      return spanContext && api.isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : undefined;
    },
    shutdown: () => sdk.shutdown(),
  });
}
