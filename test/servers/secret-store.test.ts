/**
 * The record store behind pending logins, codes and tokens: lookups by secret, expiry, and the size bound
 * that keeps a flood of authorization requests from exhausting memory.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { SecretStore, looksLikeSecret, randomSecret } from '../../servers/secret-store.js'

t.test('secrets are 43 base64url characters and unique', async (t) => {
  const a = randomSecret()
  t.ok(looksLikeSecret(a))
  t.not(a, randomSecret())
  for (const bad of [undefined, 42, '', 'x'.repeat(42), 'x'.repeat(44), `${'x'.repeat(42)}=`, `${'x'.repeat(42)}/`]) t.notOk(looksLikeSecret(bad), String(bad))
})

t.test('find: ok, missing, expired (then forgotten); delete', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const store = new SecretStore<string>(1000)
  t.equal(store.ttlSeconds, 1)
  const s = store.add('v')
  t.same(store.find(s), { status: 'ok', value: 'v' })
  t.same(store.find(randomSecret()), { status: 'missing' })
  t.same(store.find({ toString: () => s }), { status: 'missing' }, 'only strings are looked up')
  clock.tick(999)
  t.equal(store.find(s).status, 'ok')
  clock.tick(1)
  t.same(store.find(s), { status: 'expired' })
  t.same(store.find(s), { status: 'missing' }, 'an expired record is forgotten')
  const d = store.add('w')
  store.delete(d)
  t.same(store.find(d), { status: 'missing' })
})

t.test('the size is bounded: the oldest record goes first; expired ones are swept on write', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const store = new SecretStore<number>(1000, 3)
  const [a, b, c] = [store.add(1), store.add(2), store.add(3)]
  const d = store.add(4)
  t.same(store.find(a), { status: 'missing' }, 'oldest evicted')
  t.same([store.find(b), store.find(c), store.find(d)].map((r) => r.status), ['ok', 'ok', 'ok'])
  clock.tick(1000)
  const e = store.add(5)
  // b, c and d were swept as expired (not merely reported so), leaving room without evicting e.
  t.same([b, c, d].map((x) => store.find(x).status), ['missing', 'missing', 'missing'])
  const [f, g] = [store.add(6), store.add(7)]
  t.same([e, f, g].map((x) => store.find(x).status), ['ok', 'ok', 'ok'])
})
