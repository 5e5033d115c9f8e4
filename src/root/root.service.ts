import { Injectable, type OnApplicationBootstrap, type Type } from '@nestjs/common';
import { PATH_METADATA, VERSION_METADATA } from '@nestjs/common/constants.js';
import { ConfigService } from '@nestjs/config';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { applicationControllers } from '../common/routing/route-handlers.js';
import { API_VERSIONS, LATEST_VERSION } from '../common/versioning/api-versions.js';
import { DEPRECATED_VERSION, deprecationDates } from '../common/versioning/deprecation.js';
import type { Env } from '../config/env.validation.js';
import { metricsAccess, scrapeVerdict } from '../observability/metrics/metrics-access.js';
import type { ApiVersionResponse, RootResponse } from './root.response.js';

/**
 * What `GET /` answers (docs/versioning.md#the-root), worked out once at start-up from the
 * configuration and the controllers: every API version, newest first, with its document and what
 * of it is deprecated (the controllers marked `@DeprecatedVersion()`, their paths in OpenAPI form,
 * with V1_DEPRECATED_AT and V1_SUNSET_AT); the docs page and the newest document where the docs are
 * served (outside production, or with DOCS_USERNAME and DOCS_PASSWORD); the health checks; the
 * metrics where this port serves them (not with METRICS_PORT or METRICS=false, nor in production
 * without METRICS_TOKEN). Paths only: no host, credential or setting value.
 */
@Injectable()
export class RootService implements OnApplicationBootstrap {
  private root?: RootResponse;

  constructor(
    private readonly config: ConfigService<Env, true>,
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    this.root = this.build();
  }

  /** The root's representation (the same object for every request). */
  describe(): RootResponse {
    return (this.root ??= this.build());
  }

  private build(): RootResponse {
    const get = <K extends keyof Env>(key: K): Env[K] => this.config.get(key, { infer: true });
    const docs = get('NODE_ENV') !== 'production' || (!!get('DOCS_USERNAME') && !!get('DOCS_PASSWORD'));
    const dates = deprecationDates({ V1_DEPRECATED_AT: get('V1_DEPRECATED_AT'), V1_SUNSET_AT: get('V1_SUNSET_AT') });
    const deprecated = this.deprecatedPaths();
    const versions: ApiVersionResponse[] = [...API_VERSIONS].reverse().map((version) => {
      const paths = deprecated.get(version) ?? [];
      const when = dates[version];
      return {
        version,
        href: `/v${version}`,
        newest: version === LATEST_VERSION,
        document: docs ? `/docs/v${version}/openapi.json` : null,
        ...(paths.length > 0 && when ? { deprecation: { deprecated_at: when.deprecatedAt.toISOString(), sunset_at: when.sunsetAt.toISOString(), paths } } : {}),
      };
    });
    const metrics = scrapeVerdict(
      metricsAccess({ METRICS: get('METRICS'), NODE_ENV: get('NODE_ENV'), METRICS_TOKEN: get('METRICS_TOKEN'), METRICS_PORT: get('METRICS_PORT') }),
      'service',
      undefined,
    );
    return {
      name: 'resource-api',
      versions,
      links: [
        { rel: 'self', href: '/' },
        ...(docs
          ? [
              { rel: 'service-doc', href: '/docs' },
              { rel: 'service-desc', href: '/docs/openapi.json' },
            ]
          : []),
        { rel: 'health-live', href: '/health/live' },
        { rel: 'health-ready', href: '/health/ready' },
        ...(metrics !== 404 ? [{ rel: 'metrics', href: '/metrics' }] : []),
      ],
    };
  }

  /** API version → the paths (`/v1/articles/{id}/comments`) of its controllers marked `@DeprecatedVersion()`, sorted. */
  private deprecatedPaths(): Map<string, string[]> {
    const byVersion = new Map<string, string[]>();
    for (const controller of applicationControllers(this.discovery)) {
      if (this.reflector.get<boolean>(DEPRECATED_VERSION, controller) !== true) continue;
      const versions = [this.reflector.get<string | string[] | undefined>(VERSION_METADATA, controller) ?? []].flat();
      const paths = [this.reflector.get<string | string[] | undefined>(PATH_METADATA, controller as Type) ?? []].flat();
      for (const version of versions) {
        const list = byVersion.get(String(version)) ?? [];
        for (const path of paths) list.push(`/v${version}/${path.replace(/^\/|\/$/g, '').replace(/:([a-z_]+)/g, '{$1}')}`);
        byVersion.set(String(version), [...new Set(list)].sort());
      }
    }
    return byVersion;
  }
}
