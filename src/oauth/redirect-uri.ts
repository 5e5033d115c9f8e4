/** Hosts for which a redirect URI may use plain http (RFC 8252 §7.3, RFC 9700 §2.1). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Checks a redirect URI for registration (RFC 6749 §3.1.2, RFC 9700 §2.1, §4.1): an absolute
 * `https` URI — `http` only for a loopback host — without fragment, user info, wildcards,
 * whitespace or dot segments, at most 2000 characters. Returns the problem, or null when it is
 * acceptable. At the authorize endpoint the registered string is then matched exactly.
 */
export function redirectUriProblem(value: string): string | null {
  if (value.length > 2000) return 'must be at most 2000 characters';
  if (/[\s*\\]/.test(value) || /[\u0000-\u001f\u007f]/.test(value)) return 'must not contain whitespace, wildcards or backslashes';
  if (value.includes('#')) return 'must not contain a fragment';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    return 'must use https (http only for localhost, 127.0.0.1 or [::1])';
  }
  if (url.username || url.password) return 'must not contain user information';
  const path = value
    .slice(value.indexOf('//') + 2)
    .replace(/^[^/?]*/, '')
    .split('?')[0];
  if (path.split('/').some((segment) => segment === '.' || segment === '..' || /^%2e(%2e)?$|^\.%2e$|^%2e\.$/i.test(segment))) {
    return 'must not contain dot segments (. or ..)';
  }
  return null;
}
