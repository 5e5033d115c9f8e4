import { describe, expect, it } from '@jest/globals';
import { ConfigError } from './config-error.js';
import { tracingEnabled } from './tracing.config.js';

/** The ConfigError tracingEnabled throws for `raw`; fails the test when it throws nothing. */
function refusal(raw: Record<string, unknown>): ConfigError {
  try {
    tracingEnabled(raw);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(raw)}`);
}

describe('tracingEnabled (OpenTelemetry by the standard OTEL_* variables)', () => {
  const endpoint = 'http://collector:4318';

  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: ' OTLP , zipkin ' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'otlp' }, false],
    [{ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' }, false],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true],
    // only the metrics or logs exporters: this service exports traces only
    [{ OTEL_METRICS_EXPORTER: 'otlp', OTEL_LOGS_EXPORTER: 'otlp' }, false],
  ])('%j → %s', (raw, enabled) => {
    expect(tracingEnabled(raw)).toBe(enabled);
  });

  it.each([
    [{ OTEL_SDK_DISABLED: 'yes' }, 'OTEL_SDK_DISABLED'],
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, 'OTEL_TRACES_EXPORTER'],
    [{ OTEL_TRACES_EXPORTER: 'none,otlp' }, 'OTEL_TRACES_EXPORTER'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'udp' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://collector/v1/traces' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
  ])('refuses %j with one line naming %s', (raw, variable) => {
    const error = refusal(raw);
    expect(error.message).toMatch(/^Invalid configuration: /);
    expect(error.message).not.toMatch(/[\r\n]/);
    expect(error.message).toContain(variable);
  });

  it('refuses a bad value even when the SDK is disabled (a typo is found before it is switched on)', () => {
    expect(refusal({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'jeager' }).message).toContain('OTEL_TRACES_EXPORTER');
  });

  it('never echoes an endpoint, which may carry credentials', () => {
    const error = refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://user:s3cret-pass@collector:4317' });
    expect(error.message).not.toContain('s3cret-pass');
  });

  it('accepts the three OTLP protocols', () => {
    for (const protocol of ['http/protobuf', 'http/json', 'grpc']) {
      expect(tracingEnabled({ OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toBe(true);
    }
  });
});
