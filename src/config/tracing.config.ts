import { ConfigError } from './config-error.js';

/** The trace exporters the OpenTelemetry Node SDK builds from `OTEL_TRACES_EXPORTER`. */
const TRACE_EXPORTERS = ['otlp', 'zipkin', 'console', 'none'];

/** The OTLP protocols of `OTEL_EXPORTER_OTLP_PROTOCOL` / `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`. */
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'];

function text(raw: Record<string, unknown>, key: string): string | undefined {
  const value = raw[key];
  const trimmed = value === undefined ? '' : String(value).trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * Whether the service exports traces (docs/operations.md#traces: OpenTelemetry by the standard `OTEL_*`
 * variables), decided from the standard variables before the application loads:
 *
 * - `OTEL_SDK_DISABLED=true` → off, whatever else is set;
 * - `OTEL_TRACES_EXPORTER` set → on unless it is `none` (`otlp`, `zipkin`, `console`, comma-separated);
 * - else on when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 *   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; the exporter is then OTLP);
 * - else off: the OpenTelemetry SDK is not even loaded.
 *
 * Also checks the values the SDK would otherwise only warn about and ignore: the exporter names,
 * the OTLP protocol and that the endpoints are http(s) URLs. Everything else (`OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, headers, …) is read by the SDK.
 * @throws ConfigError with a one-line message naming the variable.
 */
export function tracingEnabled(raw: Record<string, unknown>): boolean {
  const disabled = text(raw, 'OTEL_SDK_DISABLED')?.toLowerCase();
  if (disabled !== undefined && disabled !== 'true' && disabled !== 'false') {
    throw new ConfigError(`Invalid configuration: OTEL_SDK_DISABLED must be true or false (got ${JSON.stringify(disabled)})`);
  }
  const exporters = text(raw, 'OTEL_TRACES_EXPORTER')
    ?.split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  for (const name of exporters ?? []) {
    if (!TRACE_EXPORTERS.includes(name)) {
      throw new ConfigError(
        `Invalid configuration: OTEL_TRACES_EXPORTER must be a comma-separated list of ${TRACE_EXPORTERS.join(', ')} (got ${JSON.stringify(name)})`,
      );
    }
  }
  if (exporters && exporters.includes('none') && exporters.length > 1) {
    throw new ConfigError('Invalid configuration: OTEL_TRACES_EXPORTER=none cannot be combined with an exporter');
  }
  for (const key of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
    const protocol = text(raw, key);
    if (protocol !== undefined && !OTLP_PROTOCOLS.includes(protocol)) {
      throw new ConfigError(`Invalid configuration: ${key} must be one of ${OTLP_PROTOCOLS.join(', ')} (got ${JSON.stringify(protocol)})`);
    }
  }
  const endpoints = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'].filter((key) => {
    const endpoint = text(raw, key);
    if (endpoint === undefined) return false;
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    // the URL itself is not echoed: it may carry credentials
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new ConfigError(`Invalid configuration: ${key} must be an http(s) URL such as http://collector:4318`);
    return true;
  });
  if (disabled === 'true') return false;
  if (exporters && exporters.length > 0) return exporters[0] !== 'none';
  return endpoints.length > 0;
}
