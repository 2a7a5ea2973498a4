/**
 * `fastify.auth.recent({ within, factor })` names a factor: only that factor, confirmed in this session within
 * `within`, opens the route. A code from the authenticator app opens `factor: 'totp'` (and the route that takes any
 * factor), never `recovery` or `passkey`; a recovery code opens `recovery`; adding the app (its first code proves the
 * app works, not who the user is) opens none.
 */
import t from 'tap'
import { authPlugin, passkeyProvider, safeEqual, totpProvider } from '../../index.js'
import { injectApp } from '../helpers/app.js'
import { addApp, call, fakeClock, PASSWORDS, SECRET, signIn, URL_BASE } from '../helpers/account-app.js'
import { KEY, oathtool } from '../helpers/totp-app.js'

const FACTORS = ['totp', 'recovery', 'passkey'] as const

t.test('recent({ factor }) is satisfied only by that factor, confirmed in this session', async (t) => {
  const clock = fakeClock(t)
  const { app, client } = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: URL_BASE,
      providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => Object.hasOwn(PASSWORDS, user) && safeEqual(PASSWORDS[user]!, passwd) }]
    })
    await app.register(totpProvider, { encryptionKey: KEY, secondFactor: ['local'] })
    await app.register(passkeyProvider, {})
    for (const factor of FACTORS) app.post(`/need/${factor}`, { preHandler: app.auth.recent({ within: '5m', factor }) }, async () => ({ opened: factor }))
    app.post('/need/any', { preHandler: app.auth.recent({ within: '5m' }) }, async () => ({ opened: 'any' }))
  })
  t.teardown(() => app.close())
  const c = client()
  const opened = async (): Promise<string[]> => {
    const open: string[] = []
    for (const route of [...FACTORS, 'any']) {
      const res = await call(c, 'POST', `/need/${route}`)
      if (res.status === 200) open.push(route)
      else t.match(await res.json(), { code: 'GATEHOUSE_STEP_UP' }, `${route}: 401 GATEHOUSE_STEP_UP`)
    }
    return open
  }

  await signIn(c, 'alice')
  t.same(await opened(), [], 'a password sign-in confirms no second factor')
  const { secret, recoveryCodes } = await addApp(c)
  t.same(await opened(), [], 'adding the app confirms none either')

  clock.tick(30_000)
  t.equal((await call(c, 'POST', '/auth/totp/verify', { code: oathtool(secret) })).status, 200)
  t.same(await opened(), ['totp', 'any'], 'a code opens totp and any, not recovery or passkey')

  clock.tick(6 * 60_000)
  t.same(await opened(), [], 'nothing past 5 minutes')
  t.equal((await call(c, 'POST', '/auth/totp/verify', { recoveryCode: recoveryCodes[0] })).status, 200)
  t.same(await opened(), ['recovery', 'any'], 'a recovery code opens recovery and any, not totp or passkey')
})
