import type { OpenAPIObject } from '@nestjs/swagger';
import { DOCUMENT_VERSIONS, inVersion, LATEST_VERSION, type ApiVersion, versionOfPath } from '../common/versioning/api-versions.js';
import { DEPRECATED_VERSION, DEPRECATION_DOCS, httpDate, type VersionDates } from '../common/versioning/deprecation.js';
import type { ResourceDeclaration } from '../common/resources/define-resource.js';
import { completeDocument } from './complete-document.js';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The response headers of deprecated operations (RFC 9745, RFC 8594, RFC 5829), shared through `components.headers`. */
function deprecationHeaderComponents(dates: VersionDates): Record<string, Json> {
  const seconds = Math.floor(dates.deprecatedAt.getTime() / 1000);
  return {
    Deprecation: {
      description: `RFC 9745: when this operation's API version is (or was) deprecated, as \`@<unix seconds>\` — ${dates.deprecatedAt.toISOString()}.`,
      schema: { type: 'string', pattern: '^@-?\\d{1,15}$', maxLength: 17, example: `@${seconds}` },
    },
    Sunset: {
      description: `RFC 8594: when this operation's API version stops being served (an HTTP-date) — ${dates.sunsetAt.toISOString()}.`,
      schema: { type: 'string', maxLength: 64, example: httpDate(dates.sunsetAt) },
    },
    Link: {
      description: `The same resource in the newest version (\`rel="successor-version"\`, RFC 5829) and the documentation of the deprecation (\`rel="deprecation"\`, RFC 9745: ${DEPRECATION_DOCS}).`,
      schema: { type: 'string', maxLength: 2048, example: `</v${LATEST_VERSION}/articles>; rel="successor-version", <${DEPRECATION_DOCS}>; rel="deprecation"; type="text/html"` },
    },
  };
}

const SCHEMA_REF = '#/components/schemas/';

/**
 * A deep copy of `node` for one version's document: `$ref`s to renamed schemas point to the new
 * names (`#/components/schemas/ArticleV2` → `…/Article`, by `names`), and with `version` every
 * text's `/v{version}/` (`VERSION_PLACEHOLDER`, api-versions.ts) is resolved to that version's prefix ({@link inVersion}).
 */
function forVersion(node: unknown, names: ReadonlyMap<string, string>, version?: ApiVersion): unknown {
  if (typeof node === 'string') return version ? inVersion(node, version) : node;
  if (Array.isArray(node)) return node.map((item) => forVersion(item, names, version));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const name = value.slice(SCHEMA_REF.length);
        return [key, names.has(name) ? SCHEMA_REF + names.get(name) : value];
      }
      return [key, forVersion(value, names, version)];
    }),
  );
}

/** Names of the component schemas `node` references, directly. */
function refsOf(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) return node.forEach((item) => refsOf(item, into));
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) into.add(value.slice(SCHEMA_REF.length));
    else refsOf(value, into);
  }
}

/**
 * The document of one API version, cut from the document of all controllers (README.md#api-documentation-and-clients, docs/versioning.md:
 * `info.version` is the version's):
 * - the version's paths (`/v<n>/…`) and the unversioned ones (`/.well-known/…`);
 * - its own schema names: `ArticleV2` and `ArticleV2List` are `Article` and `ArticleList` in the
 *   v2 document (a client of one version sees one `Article`); schemas no path uses are left out;
 * - texts and examples speak of the version's paths: their `/v{version}/` placeholder
 *   (`VERSION_PLACEHOLDER`, api-versions.ts) becomes `/v2/` in the v2 document, once the document
 *   is complete (completion adds texts of its own); nothing else in a text is changed;
 * - completed for all operations alike (errors, headers, examples: {@link completeDocument}),
 *   with the tags and versioned schemas of `resources` (the registry's declarations);
 * - operations marked `@DeprecatedVersion()` get `deprecated: true`, the dates in their
 *   description, and the `Deprecation`, `Sunset` and `Link` headers on every response.
 * `combined` is not changed.
 */
export function versionDocument(combined: OpenAPIObject, version: ApiVersion, description: string, dates: Record<string, VersionDates>, resources: readonly ResourceDeclaration[]): OpenAPIObject {
  const rename = new RegExp(`^([A-Z][A-Za-z]*?)V${version}(List)?$`);
  const names = new Map<string, string>();
  for (const name of Object.keys(combined.components?.schemas ?? {})) {
    const match = rename.exec(name);
    if (match) names.set(name, `${match[1]}${match[2] ?? ''}`);
  }
  const paths = Object.fromEntries(
    Object.entries(combined.paths).filter(([path]) => {
      const prefix = versionOfPath(path);
      return prefix === undefined || prefix === version;
    }),
  );
  // a copy with the version's `$ref`s
  let doc = forVersion({ ...combined, info: { ...combined.info, description }, paths }, names) as Json;
  doc.info.version = DOCUMENT_VERSIONS[version];

  // schemas: renamed, and only those the paths reach
  const schemas: Json = {};
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    if (names.has(name)) schemas[names.get(name)!] = schema;
    else if (![...names.values()].includes(name)) schemas[name] = schema;
  }
  const reachable = new Set<string>();
  refsOf(doc.paths, reachable);
  for (let grew = true; grew; ) {
    grew = false;
    for (const name of [...reachable]) {
      const before = reachable.size;
      refsOf(schemas[name], reachable);
      grew ||= reachable.size > before;
    }
  }
  doc.components.schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => reachable.has(name)));
  completeDocument(doc as OpenAPIObject, resources);
  // the version's prefix in every text and example, completion's own included
  doc = forVersion(doc, names, version) as Json;

  const versionDates = dates[version];
  for (const [path, pathItem] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const operation: Json | undefined = pathItem[method];
      if (!operation?.[DEPRECATED_VERSION]) continue;
      delete operation[DEPRECATED_VERSION];
      if (!versionDates) continue;
      operation.deprecated = true;
      const successor = path.replace(/^\/v\d+/, `/v${LATEST_VERSION}`);
      operation.description = [
        operation.description,
        `**Deprecated** since ${versionDates.deprecatedAt.toISOString()}; sunset (no longer served) on ${versionDates.sunsetAt.toISOString()}. ` +
          `Use \`${method.toUpperCase()} ${successor}\` (API v${LATEST_VERSION}, see the changelog). Every response carries \`Deprecation\`, \`Sunset\` and \`Link\`.`,
      ]
        .filter(Boolean)
        .join('\n\n');
      for (const response of Object.values<Json>(operation.responses ?? {})) {
        response.headers = { ...response.headers };
        for (const name of ['Deprecation', 'Sunset', 'Link']) response.headers[name] = { $ref: `#/components/headers/${name}` };
      }
      doc.components.headers = { ...doc.components.headers, ...deprecationHeaderComponents(versionDates) };
    }
  }
  return doc as OpenAPIObject;
}
