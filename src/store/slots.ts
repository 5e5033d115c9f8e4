/**
 * Reserved slots in fixed-window counters, the arithmetic shared by the in-process store and the
 * Redis Lua scripts (see {@link ACQUIRE_SCRIPT}, {@link RELEASE_SCRIPT}): one function, so both
 * stores decide the same way and the unit tests of this file describe what Redis does too.
 *
 * A slot is taken BEFORE the work it limits (a password check), in all counters at once or in
 * none, so N concurrent attempts never run more than `limit` checks per window.
 */

/** One counter to take a slot in: its key, how many slots a window holds, and the window (ms). */
export interface Slot {
  key: string;
  limit: number;
  windowMs: number;
}

/** A counter's state: slots taken in the current window and when the window ends (epoch ms). */
export interface CounterState {
  count: number;
  endsAt: number;
}

/** What {@link applyAcquire} reports: taken, or refused with the ms until a slot can free up. */
export type AcquireOutcome = { acquired: true } | { acquired: false; retryAfterMs: number };

/**
 * Takes one slot in every counter at `now` (epoch ms), or in none when any counter is full
 * (`count >= limit`); a new or ended counter starts a window of its `windowMs`. A refused attempt
 * counts nowhere; `retryAfterMs` is the longest remaining window of the full counters (each of
 * them must end before the attempt can succeed). Pure: returns the new states in `slots` order.
 */
export function applyAcquire(
  states: (CounterState | undefined)[],
  now: number,
  slots: Slot[],
): { states: (CounterState | undefined)[]; outcome: AcquireOutcome } {
  const live = states.map((state) => (state && state.endsAt > now ? state : undefined));
  let retryAfterMs = 0;
  slots.forEach((slot, i) => {
    const state = live[i];
    if (state && state.count >= slot.limit) retryAfterMs = Math.max(retryAfterMs, state.endsAt - now);
    else if (!state && slot.limit <= 0) retryAfterMs = Math.max(retryAfterMs, slot.windowMs);
  });
  if (retryAfterMs > 0) return { states: live, outcome: { acquired: false, retryAfterMs } };
  const next = slots.map((slot, i) => {
    const state = live[i];
    return state ? { count: state.count + 1, endsAt: state.endsAt } : { count: 1, endsAt: now + slot.windowMs };
  });
  return { states: next, outcome: { acquired: true } };
}

/**
 * Gives one slot back (a successful login is not a failure): the count drops by one, never below
 * zero, and the window keeps its end. Pure.
 */
export function applyRelease(state: CounterState | undefined, now: number): CounterState | undefined {
  if (!state || state.endsAt <= now) return undefined;
  return state.count > 0 ? { count: state.count - 1, endsAt: state.endsAt } : state;
}

/**
 * {@link applyAcquire} as one atomic Redis Lua script. KEYS the counters; ARGV pairs of
 * (limit, window ms) per key. Returns `{1, 0}` when every slot was taken, `{0, retryAfterMs}` when
 * refused (nothing counted).
 */
export const ACQUIRE_SCRIPT = `
local retry = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local window = tonumber(ARGV[2 * i])
  local count = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  if ttl > 0 and count >= limit then
    if ttl > retry then retry = ttl end
  elseif ttl <= 0 and limit <= 0 then
    if window > retry then retry = window end
  end
end
if retry > 0 then return {0, retry} end
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i])
  if redis.call('PTTL', key) <= 0 then
    redis.call('SET', key, '1', 'PX', window)
  else
    redis.call('INCR', key)
  end
end
return {1, 0}
`;

/** {@link applyRelease} as one atomic Redis Lua script over KEYS (the remaining time to live is kept). */
export const RELEASE_SCRIPT = `
for _, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count > 0 and redis.call('PTTL', key) > 0 then redis.call('DECR', key) end
end
return 0
`;

/**
 * Raises a numeric value atomically: KEYS[1] becomes max(its value, ARGV[1]) and lives ARGV[2] ms
 * from now (a value only ever moves forward, whatever order concurrent writers arrive in).
 * Returns the stored value.
 */
export const RAISE_SCRIPT = `
local value = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '')
if current ~= nil and current > value then value = current end
redis.call('SET', KEYS[1], string.format('%d', value), 'PX', tonumber(ARGV[2]))
return tostring(value)
`;
