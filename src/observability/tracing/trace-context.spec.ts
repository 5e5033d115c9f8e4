import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { injectTraceContext, installTraceContext, shutdownTracing, traceLogMixin, tracingActive } from './trace-context.js';

describe('trace context (what the service asks of tracing)', () => {
  afterEach(async () => {
    await shutdownTracing();
  });

  it('does nothing while tracing is off: headers unchanged, no log mixin, shutdown resolves', async () => {
    expect(tracingActive()).toBe(false);
    const headers = { 'content-type': 'application/json' };
    expect(injectTraceContext(headers)).toEqual({ 'content-type': 'application/json' });
    expect(traceLogMixin()).toBeUndefined();
    await expect(shutdownTracing()).resolves.toBeUndefined();
  });

  it('with tracing on: injects the context into outgoing headers, gives log lines the span’s ids, and shuts down once', async () => {
    const shutdown = jest.fn(async () => undefined);
    let fields: { trace_id: string; span_id: string } | undefined = { trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' };
    installTraceContext({
      inject: (headers) => {
        headers.traceparent = `00-${fields!.trace_id}-${fields!.span_id}-01`;
      },
      logFields: () => fields,
      shutdown,
    });
    expect(tracingActive()).toBe(true);
    const headers: Record<string, string> = { 'webhook-id': 'msg_1' };
    expect(injectTraceContext(headers)).toBe(headers);
    expect(headers).toEqual({ 'webhook-id': 'msg_1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });

    const mixin = traceLogMixin()!;
    expect(mixin()).toEqual({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' });
    fields = undefined; // outside a traced operation: nothing added
    expect(mixin()).toEqual({});

    await shutdownTracing();
    await shutdownTracing();
    expect(shutdown).toHaveBeenCalledTimes(1);
    expect(tracingActive()).toBe(false);
    expect(traceLogMixin()).toBeUndefined();
  });
});
