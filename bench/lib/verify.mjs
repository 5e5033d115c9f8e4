/**
 * Byte-identity check of the service's and the limit's answers to the same request, before any
 * measurement: same status, same Content-Type, same body bytes after masking what legitimately
 * differs between two calls (`volatile` regular expressions, e.g. the id and timestamps of a
 * created todo). A created resource must also carry `Location` on both.
 */

/** One HTTP exchange: `{status, headers, body}` (body as text). */
export async function exchange(base, { method, path, headers, body }) {
  const response = await fetch(base + path, { method, headers, body });
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

function mask(text, volatile) {
  let out = text;
  for (const [pattern, replacement] of volatile ?? []) out = out.replace(pattern, replacement);
  return out;
}

/** Paths where two JSON values differ (at most `limit`), e.g. `data[3].tags`. */
function jsonDiff(a, b, at = '', out = [], limit = 20) {
  if (out.length >= limit) return out;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || a === null || b === null || typeof a !== 'object') {
    if (JSON.stringify(a) !== JSON.stringify(b))
      out.push(`${at || '(root)'}: service ${JSON.stringify(a)?.slice(0, 200)} ≠ limit ${JSON.stringify(b)?.slice(0, 200)}`);
    return out;
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (!Array.isArray(a) && keysA.join() !== keysB.join()) out.push(`${at || '(root)'}: keys service [${keysA}] ≠ limit [${keysB}]`);
  for (const key of new Set([...keysA, ...keysB])) jsonDiff(a[key], b[key], Array.isArray(a) ? `${at}[${key}]` : at ? `${at}.${key}` : key, out, limit);
  return out;
}

/**
 * Compares the answers of `serviceBase` and `limitBase` to `request`. Returns `{ok, problems,
 * status, bytes}`; `problems` is a printable diff when they differ.
 */
export async function compare(serviceBase, limitBase, request) {
  const [service, limit] = [await exchange(serviceBase, request), await exchange(limitBase, request)];
  const problems = [];
  if (service.status !== limit.status) problems.push(`status: service ${service.status} ≠ limit ${limit.status}`);
  if (service.status < 200 || service.status > 299) problems.push(`service answered ${service.status}: ${service.body.slice(0, 300)}`);
  if (service.headers['content-type'] !== limit.headers['content-type']) {
    problems.push(`content-type: service ${service.headers['content-type']} ≠ limit ${limit.headers['content-type']}`);
  }
  if (service.status === 201 && (!service.headers.location || !limit.headers.location)) problems.push('Location missing on 201');
  for (const name of ['deprecation', 'sunset', 'link']) {
    if (service.headers[name] !== limit.headers[name]) problems.push(`${name}: service ${service.headers[name]} ≠ limit ${limit.headers[name]}`);
  }
  const a = mask(service.body, request.volatile);
  const b = mask(limit.body, request.volatile);
  if (a !== b) {
    let at = 0;
    while (at < a.length && a[at] === b[at]) at++;
    problems.push(`body differs at byte ${at} (service ${a.length} bytes, limit ${b.length} bytes):`);
    problems.push(`  service: …${a.slice(Math.max(0, at - 80), at + 120)}…`);
    problems.push(`  limit:   …${b.slice(Math.max(0, at - 80), at + 120)}…`);
    try {
      for (const line of jsonDiff(JSON.parse(a), JSON.parse(b))) problems.push(`  ${line}`);
    } catch {
      // not JSON: the byte context above says enough
    }
  }
  return { ok: problems.length === 0, problems, status: service.status, bytes: service.body.length };
}
