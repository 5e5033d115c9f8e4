import { describe, expect, it } from '@jest/globals';
import { bearerMatches, type MetricsAccessConfig, scrapeVerdict } from './metrics-access.js';

const TOKEN = 'a-metrics-token-of-some-length';
const config = (overrides: Partial<MetricsAccessConfig> = {}): MetricsAccessConfig => ({ enabled: true, production: false, ...overrides });

describe('scrapeVerdict (README "Metrics": who may read /metrics where)', () => {
  it('METRICS=false: 404 everywhere, token or not', () => {
    for (const place of ['service', 'metrics-port'] as const) {
      expect(scrapeVerdict(config({ enabled: false, token: TOKEN }), place, `Bearer ${TOKEN}`)).toBe(404);
    }
  });

  it('on the service port outside production: open, with or without METRICS_TOKEN', () => {
    expect(scrapeVerdict(config(), 'service', undefined)).toBe(200);
    expect(scrapeVerdict(config({ token: TOKEN }), 'service', undefined)).toBe(200);
  });

  it('on the service port in production: 404 without METRICS_TOKEN, else 401 unless the Bearer token matches', () => {
    expect(scrapeVerdict(config({ production: true }), 'service', `Bearer ${TOKEN}`)).toBe(404);
    expect(scrapeVerdict(config({ production: true, token: TOKEN }), 'service', undefined)).toBe(401);
    expect(scrapeVerdict(config({ production: true, token: TOKEN }), 'service', 'Bearer nope')).toBe(401);
    expect(scrapeVerdict(config({ production: true, token: TOKEN }), 'service', `Bearer ${TOKEN}`)).toBe(200);
  });

  it('with METRICS_PORT: 404 on the service port; on the metrics port open, or the token when set', () => {
    expect(scrapeVerdict(config({ port: 9464 }), 'service', undefined)).toBe(404);
    expect(scrapeVerdict(config({ port: 9464, production: true, token: TOKEN }), 'service', `Bearer ${TOKEN}`)).toBe(404);
    expect(scrapeVerdict(config({ port: 9464 }), 'metrics-port', undefined)).toBe(200);
    expect(scrapeVerdict(config({ port: 9464, production: true }), 'metrics-port', undefined)).toBe(200);
    expect(scrapeVerdict(config({ port: 9464, token: TOKEN }), 'metrics-port', undefined)).toBe(401);
    expect(scrapeVerdict(config({ port: 9464, token: TOKEN }), 'metrics-port', `Bearer ${TOKEN}`)).toBe(200);
  });
});

describe('bearerMatches', () => {
  it('accepts exactly `Bearer <token>`, the scheme in any case', () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`BEARER  ${TOKEN} `, TOKEN)).toBe(true);
  });

  it.each([undefined, '', TOKEN, `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, `Bearer ${TOKEN} extra`, 'Bearer ', `Bearer\t${TOKEN}`])(
    'refuses %p',
    (header) => {
      expect(bearerMatches(header, TOKEN)).toBe(false);
    },
  );
});
