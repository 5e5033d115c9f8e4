/**
 * Parity check of two servers' answers to the same request (the service and the limit, the floor
 * and the limit), before any measurement: same status, the same body bytes and the same response
 * headers, after masking what legitimately differs between two calls (`volatile` regular
 * expressions, e.g. the id and timestamps of a created todo, applied to the body and to every
 * header value, e.g. `Location`). A created resource must also carry `Location`.
 *
 * EVERY response header is compared, name and value, except those that differ per request by
 * design ({@link PER_REQUEST_HEADERS}):
 * - `Date`: the second the answer was sent;
 * - `X-Request-Id`: a fresh UUID per request (the benchmark sends none);
 * - `Server-Timing`: the request's measured durations (off in the benchmark, listed in case);
 * - `RateLimit`, `RateLimit-Remaining`, `RateLimit-Reset`: the counters of the caller's rate-limit
 *   window (requests left, seconds to its end), which every request moves; `RateLimit-Policy` and
 *   `RateLimit-Limit`, the quota, are compared.
 * `Content-Length` is compared too, except for a request with volatile parts (a created todo's id
 * may have another number of digits): there each side's must be its own body's byte length.
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
function jsonDiff(a, b, names, at = '', out = [], limit = 20) {
  if (out.length >= limit) return out;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || a === null || b === null || typeof a !== 'object') {
    if (JSON.stringify(a) !== JSON.stringify(b))
      out.push(`${at || '(root)'}: ${names[0]} ${JSON.stringify(a)?.slice(0, 200)} ≠ ${names[1]} ${JSON.stringify(b)?.slice(0, 200)}`);
    return out;
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (!Array.isArray(a) && keysA.join() !== keysB.join()) out.push(`${at || '(root)'}: keys ${names[0]} [${keysA}] ≠ ${names[1]} [${keysB}]`);
  for (const key of new Set([...keysA, ...keysB])) jsonDiff(a[key], b[key], names, Array.isArray(a) ? `${at}[${key}]` : at ? `${at}.${key}` : key, out, limit);
  return out;
}

/** Headers that differ per request by design (see the file comment), never compared. */
export const PER_REQUEST_HEADERS = new Set(['date', 'x-request-id', 'server-timing', 'ratelimit', 'ratelimit-remaining', 'ratelimit-reset']);

/**
 * Compares the answers of `baseA` and `baseB` to `request` (`names`: how the report calls them).
 * Returns `{ok, problems, status, bytes, headers}`; `problems` is a printable diff when they
 * differ; `headers` the names compared.
 */
export async function compare(baseA, baseB, request, names = ['service', 'limit']) {
  const [nameA, nameB] = names;
  const [a0, b0] = [await exchange(baseA, request), await exchange(baseB, request)];
  const problems = [];
  if (a0.status !== b0.status) problems.push(`status: ${nameA} ${a0.status} ≠ ${nameB} ${b0.status}`);
  if (a0.status < 200 || a0.status > 299) problems.push(`${nameA} answered ${a0.status}: ${a0.body.slice(0, 300)}`);
  if (a0.status === 201 && (!a0.headers.location || !b0.headers.location)) problems.push('Location missing on 201');
  const volatile = (request.volatile ?? []).length > 0;
  const compared = [];
  for (const name of [...new Set([...Object.keys(a0.headers), ...Object.keys(b0.headers)])].sort()) {
    if (PER_REQUEST_HEADERS.has(name)) continue;
    if (name === 'content-length' && volatile) {
      for (const [side, answer] of [
        [nameA, a0],
        [nameB, b0],
      ]) {
        if (answer.headers[name] !== String(Buffer.byteLength(answer.body)))
          problems.push(`content-length: ${side} ${answer.headers[name]} for a body of ${Buffer.byteLength(answer.body)} bytes`);
      }
      compared.push(name);
      continue;
    }
    const va = a0.headers[name] === undefined ? undefined : mask(a0.headers[name], request.volatile);
    const vb = b0.headers[name] === undefined ? undefined : mask(b0.headers[name], request.volatile);
    if (va !== vb)
      problems.push(
        `header ${name}: ${nameA} ${va === undefined ? '(none)' : JSON.stringify(va)} ≠ ${nameB} ${vb === undefined ? '(none)' : JSON.stringify(vb)}`,
      );
    compared.push(name);
  }
  const a = mask(a0.body, request.volatile);
  const b = mask(b0.body, request.volatile);
  if (a !== b) {
    let at = 0;
    while (at < a.length && a[at] === b[at]) at++;
    problems.push(`body differs at byte ${at} (${nameA} ${a.length} bytes, ${nameB} ${b.length} bytes):`);
    problems.push(`  ${nameA}: …${a.slice(Math.max(0, at - 80), at + 120)}…`);
    problems.push(`  ${nameB}: …${b.slice(Math.max(0, at - 80), at + 120)}…`);
    try {
      for (const line of jsonDiff(JSON.parse(a), JSON.parse(b), names)) problems.push(`  ${line}`);
    } catch {
      // not JSON: the byte context above says enough
    }
  }
  return { ok: problems.length === 0, problems, status: a0.status, bytes: a0.body.length, headers: compared, answers: [a0, b0] };
}
