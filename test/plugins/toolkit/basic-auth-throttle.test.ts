/**
 * The toolkit's opt-in lockout for basic auth (`throttle`): off unless asked for; when on, failed checks lock the
 * user name and the address with backoff, the right password is refused 429 while locked and the hash is not
 * computed; unknown and known users answer alike; counts can live in a shared store.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { listen } from '../../helpers/client.js'
import { basicAuth, basicAuthPlugin, withArgon2Hash, withBcryptHash } from '../../../plugins/toolkit/basic-auth.js'
import { argon2Hash, bcryptHash } from '../../../plugins/toolkit/password-hash.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'

const basic = (user: string, passwd: string): string => `Basic ${Buffer.from(`${user}:${passwd}`).toString('base64')}`

t.test('bcrypt and argon2 variants with throttle: locked after five failures, right password refused', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const bcrypt = await bcryptHash('bcrypt-secret', 4)
  const argon = await argon2Hash('argon-secret')
  const checked: string[] = []
  const { app, base } = await listen(async (app) => {
    app.get('/bcrypt', { onRequest: withBcryptHash('ops', bcrypt, { throttle: true }) }, async () => 'in')
    app.get('/argon', { onRequest: withArgon2Hash('ops', argon.hash, argon.salt, undefined, { throttle: { perAccount: 3, lockout: '30s' } }) }, async () => 'in')
    app.get('/checker', { onRequest: basicAuth((u, p) => { checked.push(u); return u === 'bob' && p === 'pw' }, undefined, { throttle: true }) }, async () => 'in')
    app.get('/plain', { onRequest: withBcryptHash('ops', bcrypt) }, async () => 'in')
  })
  t.teardown(() => app.close())
  const get = (path: string, user: string, passwd: string): Promise<Response> => fetch(base + path, { headers: { authorization: basic(user, passwd) } })

  for (let i = 0; i < 5; i++) t.equal((await get('/bcrypt', 'ops', `wrong-${i}`)).status, 403)
  const locked = await get('/bcrypt', 'ops', 'bcrypt-secret')
  t.equal(locked.status, 429, 'the right password is refused while locked')
  t.equal(locked.headers.get('retry-after'), '60')
  t.same(await locked.json(), { error: 'too many requests', details: 'too many failed sign-in attempts; try again later', code: 'GATEHOUSE_RATE_LIMITED' })
  clock.tick(60_000)
  t.equal((await get('/bcrypt', 'ops', 'bcrypt-secret')).status, 200, 'after the lockout')

  for (let i = 0; i < 3; i++) t.equal((await get('/argon', 'ops', `wrong-${i}`)).status, 403)
  const argonLocked = await get('/argon', 'ops', 'argon-secret')
  t.equal(argonLocked.status, 429, 'argon2 with its own settings: three failures')
  t.equal(argonLocked.headers.get('retry-after'), '30')

  for (let i = 0; i < 5; i++) await get('/checker', 'bob', `no-${i}`)
  t.equal((await get('/checker', 'bob', 'pw')).status, 429)
  t.equal(checked.length, 5, 'the checker does not run while locked')
  const unknown: number[] = []
  for (let i = 0; i < 6; i++) unknown.push((await get('/checker', 'nobody', `no-${i}`)).status)
  t.same(unknown, [403, 403, 403, 403, 403, 429], 'an unknown user is counted exactly like a known one')

  const plain: number[] = []
  for (let i = 0; i < 8; i++) plain.push((await get('/plain', 'ops', `wrong-${i}`)).status)
  t.same(plain, Array(8).fill(403), 'without throttle: no lockout (opt-in)')
  t.equal((await get('/plain', 'ops', 'bcrypt-secret')).status, 200)
  t.equal((await fetch(`${base}/bcrypt`)).status, 401, 'no credentials: 401 as before, nothing counted')
})

t.test('basicAuthPlugin with a shared store: two apps share the lockout', async (t) => {
  const store = new MemoryStateStore()
  const bcrypt = await bcryptHash('shared-secret', 4)
  const apps = await Promise.all([0, 1].map(async () => await listen(async (app) => {
    await app.register(basicAuthPlugin, { user: 'ops', bcryptHash: bcrypt, throttle: { store, perAccount: 2 } })
    app.get('/', async () => 'in')
  })))
  t.teardown(async () => { for (const a of apps) await a.app.close() })
  const get = (i: number, passwd: string): Promise<Response> => fetch(apps[i]!.base, { headers: { authorization: basic('ops', passwd) } })
  t.equal((await get(0, 'x')).status, 403)
  t.equal((await get(1, 'y')).status, 403)
  t.equal((await get(0, 'shared-secret')).status, 429, 'failures on both apps locked the user')
})

t.test('bad throttle options are OptionsErrors naming them', async (t) => {
  const bcrypt = await bcryptHash('x', 4)
  t.throws(() => withBcryptHash('ops', bcrypt, { throttle: { perAccount: -1 } }), { code: 'GATEHOUSE_OPTION', option: 'basicAuth.throttle.perAccount' })
  t.throws(() => withBcryptHash('ops', bcrypt, { throttle: { store: {} as never } }), { code: 'GATEHOUSE_OPTION', option: 'basicAuth.throttle.store' })
  t.throws(() => withBcryptHash('ops', bcrypt, { throttle: { clientKey: 'ip' as never } }), { code: 'GATEHOUSE_OPTION', option: 'basicAuth.throttle.clientKey' })
  t.throws(() => withBcryptHash('ops', bcrypt, { throttle: { window: 'soon' } as never }), { code: 'GATEHOUSE_OPTION', option: 'basicAuth.throttle.window' })
  t.throws(() => withBcryptHash('ops', bcrypt, { throttle: { bogus: 1 } as never }), { code: 'GATEHOUSE_OPTION', option: 'basicAuth.throttle.bogus' })
})
