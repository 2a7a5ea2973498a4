/**
 * The Lua scripts of the Redis state store. Each runs atomically on the server. Keys: the entry, then (where
 * used) its undo record, then the per-client counter. Client counters count the entries a client created and
 * live as long as the longest-lived of them, so they bound what one client holds at once from above.
 */

/**
 * SET, NX or not, counted for the client, with an undo record for consuming writes.
 * KEYS: entry, undo record (or the entry again), client counter. ARGV: value, ttl ms, nx 1|0, max per client
 * (0: not counted), undo 1|0. Returns {1, 0} stored, {0, 0} exists (NX), {2, ms} the client holds its share.
 * A write whose undo record exists already is this very write sent again after a reconnect: it reports stored.
 */
export const WRITE_SCRIPT = `
local ttl = tonumber(ARGV[2])
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return {1, 0} end
local exists = redis.call('EXISTS', KEYS[1]) == 1
if exists and ARGV[3] == '1' then return {0, 0} end
local max = tonumber(ARGV[4])
if max > 0 and not exists then
  local held = tonumber(redis.call('GET', KEYS[3]) or '0')
  if held >= max then return {2, redis.call('PTTL', KEYS[3])} end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
if ARGV[5] == '1' then redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl) end
if max > 0 and not exists then
  redis.call('INCR', KEYS[3])
  if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
end
return {1, 0}
`

/**
 * GET and DEL in one step, leaving an undo record `<pttl>:<value>` that lives as long as the entry would have.
 * KEYS: entry, undo record. Returns the value or nil; a take whose undo record exists is this very take sent
 * again after a reconnect, and returns what it took. (A script rather than GETDEL: Redis before 6.2 works too.)
 */
export const TAKE_SCRIPT = `
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
 * Undoes a consuming operation that was answered with an error. KEYS: entry, undo record. ARGV: 'set' (delete
 * the entry if it still holds what the write stored) or 'take' (put the value back unless the key was set
 * since). Without an undo record (the operation never ran, or was undone already) it does nothing.
 */
export const UNDO_SCRIPT = `
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
 * INCR with a lifetime: set at creation, or at every increment when sliding; a new counter is counted for the
 * client. KEYS: counter, client counter. ARGV: ttl ms, sliding 1|0, max per client (0: not counted).
 * Returns {count, pttl}, or {-1, ms} when the client holds its share.
 */
export const INCREMENT_SCRIPT = `
local ttl = tonumber(ARGV[1])
local max = tonumber(ARGV[3])
if max > 0 and redis.call('EXISTS', KEYS[1]) == 0 then
  local held = tonumber(redis.call('GET', KEYS[2]) or '0')
  if held >= max then return {-1, redis.call('PTTL', KEYS[2])} end
  redis.call('INCR', KEYS[2])
  if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
end
local n = redis.call('INCR', KEYS[1])
if n == 1 or ARGV[2] == '1' then redis.call('PEXPIRE', KEYS[1], ttl) end
return {n, redis.call('PTTL', KEYS[1])}
`
