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

/** Attributes of a span (OpenTelemetry semantic convention names where one exists). */
export type SpanAttributes = Record<string, string | number | boolean>;

/** What the work of {@link inSpan} may do to its span. */
export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed (status ERROR) with a short, secret-free message. */
  fail(message: string): void;
}

/** How {@link inSpan} makes its span: its kind, its parent (a W3C `traceparent`; none: a new trace), its first attributes. */
export interface SpanOptions {
  kind: 'client' | 'producer' | 'internal';
  parent?: string | null;
  attributes?: SpanAttributes;
}

/** The implementations {@link installTraceContext} installs (built on `@opentelemetry/api`). */
export interface TraceContextImpl {
  /** Writes the active context into outgoing headers (`traceparent`, `tracestate`, per OTEL_PROPAGATORS). */
  inject(headers: Record<string, string>): void;
  /** The active span's context as a W3C `traceparent`, or undefined outside a traced operation. */
  traceparent(): string | undefined;
  /** Runs `work` in a new active span (see {@link inSpan}). */
  inSpan<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => Promise<T>): Promise<T>;
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

/** A W3C trace context's fields: trace id (32 hex), parent span id (16 hex), flags (bit 0: sampled). */
export interface TraceparentFields {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Parses a W3C `traceparent` of version 00; undefined when malformed or an all-zero id (invalid per the spec). */
export function parseTraceparent(value: string): TraceparentFields | undefined {
  const match = TRACEPARENT.exec(value);
  if (!match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return undefined;
  return { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16) };
}

/** Formats `fields` as a W3C `traceparent` (version 00). */
export function formatTraceparent(fields: TraceparentFields): string {
  return `00-${fields.traceId}-${fields.spanId}-${(fields.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The active span's context as a W3C `traceparent` (55 characters), to be stored with work done
 * later on the request's behalf (an event's webhook deliveries); null when tracing is off or no
 * span is active.
 */
export function currentTraceparent(): string | null {
  return impl?.traceparent() ?? null;
}

const NO_SPAN: SpanHandle = { setAttributes: () => undefined, fail: () => undefined };

/**
 * Runs `work` inside a new span `name` — the active span while it runs, so statements and
 * injected headers belong to it — and ends the span when `work` settles (status ERROR when it
 * rejects or calls `fail`). The parent is `options.parent` (a stored `traceparent`: the trace of
 * the request the work is done for), never the context the caller happens to run in; none or a
 * malformed one starts a new trace. While tracing is off it just runs `work`. Resolves or rejects
 * as `work` does.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => Promise<T>): Promise<T> {
  return impl ? impl.inSpan(name, options, work) : work(NO_SPAN);
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
