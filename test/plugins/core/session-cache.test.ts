/**
 * The verified-session cache's eviction on its own: bounded, second chance for entries hit since the hand last
 * passed, slots of deleted entries reused, replacing a token keeps one entry.
 */
import t from 'tap'
import { SessionCache, type CachedSession } from '../../../plugins/core/sessions/session-cache.js'

function entry (token: string, expiresAt = Date.now() + 60_000): CachedSession {
  return { token, expiresAt, hit: false, slot: -1 } as unknown as CachedSession
}

t.test('the oldest entry not hit since the hand passed is evicted; a hit one gets a second chance', async (t) => {
  const c = new SessionCache(3)
  for (const k of ['a', 'b', 'c']) c.set(entry(k))
  c.get('a')!.hit = true
  c.set(entry('d'))
  t.equal(c.size, 3)
  t.ok(c.get('a'), 'a was hit: kept')
  t.notOk(c.get('b'), 'b, the oldest not hit, is evicted')
  t.ok(c.get('c') && c.get('d'))
  t.equal(c.get('a')!.hit, false, 'the hand cleared the flag it passed')
})

t.test('an expired entry gets no second chance', async (t) => {
  const c = new SessionCache(2)
  const old = entry('old', Date.now() - 1)
  old.hit = true
  c.set(old)
  c.set(entry('x'))
  c.set(entry('y'))
  t.notOk(c.get('old'))
  t.ok(c.get('x') && c.get('y'))
})

t.test('hit entries cannot hold the cache: after SECOND_CHANCES passes the hand evicts regardless', async (t) => {
  const c = new SessionCache(2)
  c.set(entry('p'))
  c.set(entry('q'))
  for (let i = 0; i < 50; i++) {
    for (const k of ['p', 'q']) { const e = c.get(k); if (e) e.hit = true }
    c.set(entry(`n${i}`))
    t.ok(c.size <= 2)
  }
  t.ok(c.get('n49'), 'the newest entry is in')
})

t.test('deleted slots are reused, replacing a token keeps one entry, clear empties, size 0 stores nothing', async (t) => {
  const c = new SessionCache(3)
  for (const k of ['a', 'b', 'c']) c.set(entry(k))
  c.delete('b')
  c.delete('missing')
  t.equal(c.size, 2)
  c.set(entry('d'))
  t.ok(c.get('a') && c.get('c') && c.get('d'), 'the freed slot took d: nothing evicted')
  const again = entry('a')
  c.set(again)
  t.equal(c.size, 3)
  t.equal(c.get('a'), again, 'the new entry replaced the old one')
  c.set(entry('e'))
  t.equal(c.size, 3)
  c.clear()
  t.equal(c.size, 0)
  c.set(entry('f'))
  t.equal(c.size, 1)
  const off = new SessionCache(0)
  off.set(entry('z'))
  t.equal(off.size, 0)
})

t.test('a cycle of many more tokens than the cache holds stays bounded', async (t) => {
  const c = new SessionCache(100)
  for (let i = 0; i < 10_000; i++) {
    c.set(entry(`t${i}`))
    if (i % 3 === 0) c.get(`t${i}`)!.hit = true
    if (i % 7 === 0) c.delete(`t${i - 5}`)
  }
  t.ok(c.size <= 100, `size ${c.size}`)
  t.ok(c.get('t9999'))
})
