import { afterEach, describe, expect, it, jest } from '@jest/globals';
import {
  currentTraceparent,
  formatTraceparent,
  injectTraceContext,
  inSpan,
  installTraceContext,
  parseTraceparent,
  shutdownTracing,
  traceLogMixin,
  tracingActive,
} from './trace-context.js';

describe('trace context (what the service asks of tracing)', () => {
  afterEach(async () => {
    await shutdownTracing();
  });

  it('does nothing while tracing is off: headers unchanged, no log mixin, shutdown resolves', async () => {
    expect(tracingActive()).toBe(false);
    const headers = { 'content-type': 'application/json' };
    expect(injectTraceContext(headers)).toEqual({ 'content-type': 'application/json' });
    expect(traceLogMixin()).toBeUndefined();
    expect(currentTraceparent()).toBeNull();
    await expect(shutdownTracing()).resolves.toBeUndefined();
  });

  it('runs inSpan work untraced while tracing is off: its result, its rejection, span calls ignored', async () => {
    await expect(
      inSpan('work', { kind: 'client', parent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, async (span) => {
        span.setAttributes({ a: 1 });
        span.fail('ignored');
        return 42;
      }),
    ).resolves.toBe(42);
    await expect(inSpan('work', { kind: 'internal' }, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it('parses and formats W3C traceparent (version 00); refuses malformed values and all-zero ids', () => {
    const value = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(parseTraceparent(value)).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 });
    expect(formatTraceparent(parseTraceparent(value)!)).toBe(value);
    expect(formatTraceparent({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0 })).toBe(
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00',
    );
    for (const bad of [
      '',
      '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333\u0000-01',
      '__proto__',
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
  });

  it('with tracing on: injects the context into outgoing headers, gives log lines the span’s ids, and shuts down once', async () => {
    const shutdown = jest.fn(async () => undefined);
    let fields: { trace_id: string; span_id: string } | undefined = { trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' };
    installTraceContext({
      inject: (headers) => {
        headers.traceparent = `00-${fields!.trace_id}-${fields!.span_id}-01`;
      },
      logFields: () => fields,
      traceparent: () => (fields ? `00-${fields.trace_id}-${fields.span_id}-01` : undefined),
      inSpan: (_name, _options, work) => work({ setAttributes: () => undefined, fail: () => undefined }),
      shutdown,
    });
    expect(tracingActive()).toBe(true);
    const headers: Record<string, string> = { 'webhook-id': 'msg_1' };
    expect(injectTraceContext(headers)).toBe(headers);
    expect(headers).toEqual({ 'webhook-id': 'msg_1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });

    const mixin = traceLogMixin()!;
    expect(mixin()).toEqual({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' });
    expect(currentTraceparent()).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    fields = undefined; // outside a traced operation: nothing added
    expect(mixin()).toEqual({});
    expect(currentTraceparent()).toBeNull();

    await shutdownTracing();
    await shutdownTracing();
    expect(shutdown).toHaveBeenCalledTimes(1);
    expect(tracingActive()).toBe(false);
    expect(traceLogMixin()).toBeUndefined();
  });
});
