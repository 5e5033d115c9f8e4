/**
 * The fixed-window arithmetic shared by the in-process store and the Redis Lua script
 * (see {@link HIT_SCRIPT}): one function, so both stores count the same way and the unit tests of
 * this file describe what Redis does too (test/shared-state.e2e-spec.ts runs the script against
 * the same cases).
 */

/** A counter's state: hits in the current window and when the window and any block end (epoch ms; 0 = none). */
export interface WindowState {
  hits: number;
  windowEndsAt: number;
  blockEndsAt: number;
}

/** What one hit reports. Durations in milliseconds from `now`. */
export interface HitOutcome {
  /** Hits counted in the current window, this one included (a blocked hit is not counted). */
  hits: number;
  /** Until the window ends (0 when there is none). */
  windowMs: number;
  /** True when this hit is over the limit: the caller answers 429. */
  blocked: boolean;
  /** Until the block ends (0 when not blocked): the `Retry-After`. */
  blockMs: number;
}

/**
 * Counts one hit at `now` (epoch ms) in a fixed window of `windowMs` that starts at the first hit.
 * Hit `limit + 1` blocks the key for `blockMs`, or until the window ends when `blockMs` ≤ 0;
 * while blocked, hits are refused and not counted. Returns the new state and the outcome; pure.
 */
export function applyHit(
  state: WindowState | undefined,
  now: number,
  windowMs: number,
  limit: number,
  blockMs: number,
): { state: WindowState; outcome: HitOutcome } {
  const live = state && state.windowEndsAt > now ? state : { hits: 0, windowEndsAt: 0, blockEndsAt: state?.blockEndsAt ?? 0 };
  if (live.blockEndsAt > now) {
    return {
      state: live,
      outcome: { hits: live.hits, windowMs: live.windowEndsAt > now ? live.windowEndsAt - now : 0, blocked: true, blockMs: live.blockEndsAt - now },
    };
  }
  const hits = live.hits + 1;
  const windowEndsAt = live.hits === 0 ? now + windowMs : live.windowEndsAt;
  if (hits > limit) {
    const block = blockMs > 0 ? blockMs : windowEndsAt - now;
    return {
      state: { hits, windowEndsAt, blockEndsAt: now + block },
      outcome: { hits, windowMs: windowEndsAt - now, blocked: true, blockMs: block },
    };
  }
  return { state: { hits, windowEndsAt, blockEndsAt: 0 }, outcome: { hits, windowMs: windowEndsAt - now, blocked: false, blockMs: 0 } };
}

/**
 * {@link applyHit} as one atomic Redis Lua script. KEYS[1] the hit counter (its PTTL is the
 * window), KEYS[2] the block marker (its PTTL is the block); ARGV window ms, limit, block ms.
 * Returns `{hits, windowMs, blocked (0|1), blockMs}`.
 */
export const HIT_SCRIPT = `
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local block = tonumber(ARGV[3])
local block_ttl = redis.call('PTTL', KEYS[2])
if block_ttl > 0 then
  local hits = tonumber(redis.call('GET', KEYS[1]) or '0')
  local window_ttl = redis.call('PTTL', KEYS[1])
  if window_ttl < 0 then window_ttl = 0 end
  return {hits, window_ttl, 1, block_ttl}
end
local hits = redis.call('INCR', KEYS[1])
local window_ttl = redis.call('PTTL', KEYS[1])
if window_ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  window_ttl = window
end
if hits > limit then
  local b = window_ttl
  if block > 0 then b = block end
  redis.call('SET', KEYS[2], '1', 'PX', b)
  return {hits, window_ttl, 1, b}
end
return {hits, window_ttl, 0, 0}
`;
