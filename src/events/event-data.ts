import { serveAsVersion } from '../common/versioning/api-versions.js';

/**
 * A resource's representation in both API versions, for an event's `data`: `build` runs once as
 * serving v1 and once as serving v2 ({@link serveAsVersion}), so the links its mapper writes point
 * into each version whatever version serves the request; `build` gets the version for the shapes
 * that differ (v2 articles and comments embed their author).
 */
export function inBothVersions<T extends object>(build: (version: '1' | '2') => T): { v1: T; v2: T } {
  return { v1: serveAsVersion('1', () => build('1')), v2: serveAsVersion('2', () => build('2')) };
}
