import { EntityTagInterceptor } from './entity-tag.interceptor.js';
import { ExpandInterceptor } from './expand.interceptor.js';
import { ListEnvelopeInterceptor } from './list-envelope.interceptor.js';
import { LocationInterceptor } from './location.interceptor.js';
import { PrivateCachingInterceptor } from './private-caching.interceptor.js';
import { QueryRulesInterceptor } from './query-rules.interceptor.js';
import { RequestScopeInterceptor } from './request-scope.interceptor.js';

/**
 * The interceptors that shape every resource operation's answer, one job each, outermost first
 * (registered in this order as global interceptors by CommonModule): caching headers of
 * authenticated answers; the query rules (and a read's `fields`); the list envelope; `expand` of
 * a list's items or a read (inside the envelope and `fields`, outside the entity tag); `Location`
 * of a create; the `ETag` of a single resource (computed before any `fields` projection, since
 * the answers pass back through them innermost first); the request's served version and write
 * precondition around the handler.
 */
export const RESOURCE_INTERCEPTORS = [
  PrivateCachingInterceptor,
  QueryRulesInterceptor,
  ListEnvelopeInterceptor,
  ExpandInterceptor,
  LocationInterceptor,
  EntityTagInterceptor,
  RequestScopeInterceptor,
] as const;
