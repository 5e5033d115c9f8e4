/**
 * What the rest of the service asks of tracing, without loading OpenTelemetry: while tracing is
 * off (the default) every function here is a no-op and no `@opentelemetry/*` module is loaded;
 * {@link startTracing} installs the real implementations before the application loads.
 */

/** The trace ids a log line carries: the active span's (W3C hex, 32 and 16 characters). */
export interface TraceLogFields {
  trace_id: string;
  span_id: string;
}

/** The implementations {@link installTraceContext} installs (built on `@opentelemetry/api`). */
export interface TraceContextImpl {
  /** Writes the active context into outgoing headers (`traceparent`, `tracestate`, per OTEL_PROPAGATORS). */
  inject(headers: Record<string, string>): void;
  /** The active span's ids, or undefined outside a traced operation. */
  logFields(): TraceLogFields | undefined;
  /** Ends tracing: exports the spans still buffered; resolves when done. */
  shutdown(): Promise<void>;
}

let impl: TraceContextImpl | undefined;

/** Installs the tracing implementations (called once, by startTracing). */
export function installTraceContext(implementation: TraceContextImpl): void {
  impl = implementation;
}

/** True once tracing has started in this process. */
export function tracingActive(): boolean {
  return impl !== undefined;
}

/**
 * Adds the active trace context to the headers of an outgoing request (W3C `traceparent` and
 * `tracestate` with the default propagators), so the receiver continues the trace — for example a
 * webhook delivery made while a span is active. Mutates and returns `headers`; unchanged when
 * tracing is off or no span is active.
 */
export function injectTraceContext<T extends Record<string, string>>(headers: T): T {
  impl?.inject(headers);
  return headers;
}

/**
 * A pino `mixin` that adds `trace_id` and `span_id` of the active span to every log line written
 * inside a traced operation (a request's lines carry its server span's trace), or undefined while
 * tracing is off (then the logger gets no mixin and pays nothing).
 */
export function traceLogMixin(): (() => Partial<TraceLogFields>) | undefined {
  const current = impl;
  if (!current) return undefined;
  return () => current.logFields() ?? {};
}

/** Exports the spans still buffered and stops tracing; resolves at once when tracing is off. */
export async function shutdownTracing(): Promise<void> {
  const current = impl;
  impl = undefined;
  await current?.shutdown();
}
