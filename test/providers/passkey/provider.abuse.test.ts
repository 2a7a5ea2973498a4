/**
 * Passkey sign-in under abuse: asking for login options is a login request (rateLimit.login, 429 with
 * Retry-After past the limit, nothing stored), and each ceremony record counts against the client's share of the
 * state store, so one client asking for options without end cannot fill it for everyone else.
 */
import t from 'tap'
import { MemoryStateStore } from '../../../stores/index.js'
import { startApp } from '../../helpers/passkey-app.js'

const OPTIONS = '/auth/passkey/login/options'

t.test('login options count as login requests of the address: 429 with Retry-After past rateLimit.login', async (t) => {
  const store = new MemoryStateStore()
  const s = await startApp(t, {}, { stateStore: store, rateLimit: { login: { max: 3, window: '1m' } } })
  const c = s.client()
  for (let i = 0; i < 3; i++) t.equal((await c.fetch(OPTIONS, { method: 'POST', json: {} })).status, 200, `request ${i + 1} is within the limit`)
  const held = store.size
  const refused = await c.fetch(OPTIONS, { method: 'POST', json: {} })
  t.equal(refused.status, 429)
  t.match(await refused.json(), { error: 'too many requests', code: 'GATEHOUSE_RATE_LIMITED' })
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After names the wait')
  t.notOk(refused.headers.get('set-cookie')?.includes('gatehouse-passkey-passkey-login'), 'no ceremony cookie')
  t.equal(store.size, held, 'nothing stored for the refused request')
})

t.test('ceremony records count against the client\'s share of the state store', async (t) => {
  const store = new MemoryStateStore({ maxPerClient: 4 })
  // The login limit is lifted so that only the store's per-client share decides.
  const s = await startApp(t, {}, { stateStore: store, rateLimit: { login: { max: 0 } } })
  const c = s.client()
  const statuses: number[] = []
  for (let i = 0; i < 8; i++) statuses.push((await c.fetch(OPTIONS, { method: 'POST', json: {} })).status)
  t.same(statuses.slice(0, 4), [200, 200, 200, 200], 'four ceremonies fit the share')
  t.ok(statuses.slice(4).every((st) => st === 429), `past the share: ${statuses.slice(4).join(', ')}`)
  t.ok(store.size <= 4, `the store holds ${store.size} entries (share 4)`)
})
