/**
 * The Lua scripts of the Redis state store. Each runs atomically on the server and touches the keys of one
 * entity only (an entry and its undo record share a hash tag), so every script runs within one slot of a Redis
 * Cluster. Client counters count the entries a client created and live as long as the longest-lived of them;
 * a place is taken before the entry is written (a step of its own, in the client's slot) and given back when the
 * write created nothing, so they bound what one client holds at once from above.
 */

/**
 * SET, NX or not, with an undo record for consuming writes. KEYS: entry, undo record, its tombstone (or the entry
 * again for both), all in one slot. ARGV: value, ttl ms, nx 1|0, undo 1|0, existing only 1|0 (a new entry needs
 * a place of its client's share first: then nothing is written). Returns {1, 0} stored new, {1, 1} replaced,
 * {0, 1} exists (NX), {2, 0} new and not written (existing only), {0, 0} undone already. A write whose undo
 * record exists already is this very write sent again after a reconnect: it reports stored new. A write whose
 * tombstone exists was undone before it arrived (see UNDO_SCRIPT): it writes nothing.
 */
export const WRITE_SCRIPT = `
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return {0, 0} end
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return {1, 0} end
local existed = redis.call('EXISTS', KEYS[1])
if existed == 1 and ARGV[3] == '1' then return {0, 1} end
if existed == 0 and ARGV[5] == '1' then return {2, 0} end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
if ARGV[4] == '1' then redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl) end
return {1, existed}
`

/**
 * Takes one place of a client's share, before the entry it is for is created (in the entry's own slot, so on a
 * Cluster this is a step of its own). KEYS: client counter. ARGV: max per client, ttl ms. Returns {1, 0} taken,
 * or {0, ms} when the client holds its share. The counter lives as long as the longest-lived entry counted.
 */
export const RESERVE_SCRIPT = `
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
if held >= tonumber(ARGV[1]) then return {0, redis.call('PTTL', KEYS[1])} end
redis.call('INCR', KEYS[1])
local ttl = tonumber(ARGV[2])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return {1, 0}
`

/** Gives back a place taken by RESERVE_SCRIPT whose write created nothing. KEYS: client counter. */
export const RELEASE_SCRIPT = `
local n = redis.call('DECR', KEYS[1])
if n <= 0 then redis.call('DEL', KEYS[1]) end
return n
`

/**
 * GET and DEL in one step, leaving an undo record `<pttl>:<value>` that lives as long as the entry would have.
 * KEYS: entry, undo record, its tombstone. Returns the value or nil; a take whose undo record exists is this very
 * take sent again after a reconnect, and returns what it took; a take whose tombstone exists was undone before it
 * arrived, and takes nothing. (A script rather than GETDEL: Redis before 6.2 works too.)
 */
export const TAKE_SCRIPT = `
if redis.call('EXISTS', KEYS[3]) == 1 then return false end
local u = redis.call('GET', KEYS[2])
if u then return string.sub(u, string.find(u, ':', 1, true) + 1) end
local v = redis.call('GET', KEYS[1])
if not v then return false end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('SET', KEYS[2], ttl .. ':' .. v, 'PX', ttl) end
redis.call('DEL', KEYS[1])
return v
`

/**
 * Undoes a consuming operation that was answered with an error. KEYS: entry, undo record, its tombstone. ARGV:
 * 'set' (delete the entry if it still holds what the write stored) or 'take' (put the value back unless the key
 * was set since), the tombstone's lifetime in ms. Without an undo record (the operation never ran, was undone
 * already, or has not arrived yet) it changes no entry. Either way it leaves the tombstone, so that the operation
 * does nothing if it arrives later: on a Cluster, ioredis re-sends a command held back by a failover
 * (CLUSTERDOWN, TRYAGAIN, MOVED) after a delay, which can be after its command timeout and after this undo.
 */
export const UNDO_SCRIPT = `
redis.call('SET', KEYS[3], '1', 'PX', tonumber(ARGV[2]))
local u = redis.call('GET', KEYS[2])
if not u then return 0 end
redis.call('DEL', KEYS[2])
if ARGV[1] == 'set' then
  if redis.call('GET', KEYS[1]) == u then redis.call('DEL', KEYS[1]) end
else
  local i = string.find(u, ':', 1, true)
  redis.call('SET', KEYS[1], string.sub(u, i + 1), 'PX', tonumber(string.sub(u, 1, i - 1)), 'NX')
end
return 1
`

/**
 * INCR with a lifetime: set at creation, or at every increment when sliding. KEYS: counter. ARGV: ttl ms, sliding
 * 1|0, existing only 1|0 (then a missing counter is not created: the caller first takes a place of the client's
 * share). Returns {count, pttl}, or {0, 0} when asked for an existing counter and there is none.
 */
export const INCREMENT_SCRIPT = `
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
local ttl = tonumber(ARGV[1])
local n = redis.call('INCR', KEYS[1])
if n == 1 or ARGV[2] == '1' then redis.call('PEXPIRE', KEYS[1], ttl) end
return {n, redis.call('PTTL', KEYS[1])}
`

/**
 * One entry replaced by another, a marker left in its place (`StateStore.exchange`: a refresh token's rotation),
 * in four commands with the EVAL. KEYS: from, to, marker (one hash tag). ARGV: to's value and ttl ms, the
 * marker's value and ttl ms. Returns 1 exchanged, 0 when `from` was gone (nothing written), 2 when `to` holds
 * something else: UNDO_EXCHANGE_SCRIPT ran first and left its tombstone there, so this late arrival does nothing.
 * `to` is written first, NX: a new entry's key (the hash of a fresh secret) exists only when this very exchange
 * ran already (sent again after a reconnect: it reports what it did) or was undone. The caller holds `from`'s
 * value, so it is deleted rather than taken (no undo record: UNDO_EXCHANGE_SCRIPT gets the value from the caller).
 */
export const EXCHANGE_SCRIPT = `
if not redis.call('SET', KEYS[2], ARGV[1], 'PX', tonumber(ARGV[2]), 'NX') then
  if redis.call('GET', KEYS[2]) == ARGV[1] then return 1 end
  return 2
end
if redis.call('DEL', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
  return 0
end
redis.call('SET', KEYS[3], ARGV[3], 'PX', tonumber(ARGV[4]))
return 1
`

/**
 * Undoes an exchange that was answered with an error. KEYS: from, to, marker. ARGV: from's value and the ms it
 * had left (0: it is not put back), to's value, the tombstone's lifetime in ms. When `to` holds what the exchange
 * wrote, the exchange ran: `from` is put back and the marker deleted. Either way `to` is left holding the
 * tombstone (an empty value), so that the exchange, arriving later, does nothing (see EXCHANGE_SCRIPT).
 */
export const UNDO_EXCHANGE_SCRIPT = `
if redis.call('GET', KEYS[2]) == ARGV[3] then
  if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2])) end
  redis.call('DEL', KEYS[3])
end
redis.call('SET', KEYS[2], '', 'PX', tonumber(ARGV[4]))
return 1
`
