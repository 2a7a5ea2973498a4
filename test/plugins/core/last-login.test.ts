/**
 * The `lastLoginMethod` option over real HTTP: after a sign-in the answer carries a readable cookie naming the
 * provider (SameSite=Lax, Path=/, not HttpOnly, Secure on https), never on a refused login, and only when asked for.
 * A sign-in completed by a second factor (an authenticator code, a passkey after the password) names the method the
 * user chose, the password's provider, not the second factor's route; a passkey on its own names itself.
 */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import { directProvider } from '../../../providers/direct.js'
import { providerKit } from '../../../plugins/core/kit.js'
import { listen } from '../../helpers/client.js'
import * as totp from '../../helpers/totp-app.js'
import * as passkey from '../../helpers/passkey-app.js'

const SECRET = 'last-login-test-secret-0123456789abcdef-0123456789'

async function start (t: Test, opts: Partial<AuthOptions>): Promise<string> {
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: SECRET, url: 'http://app.localhost', ...opts })
    await app.register(directProvider, { name: 'local', checker: (_u: string, p: string) => p === 'right-password' })
    await app.register(async (scope) => {
      const kit = providerKit(scope)
      kit.mount({ name: 'magic', login: async (request, reply, login) => await kit.completeLogin(request, reply, { user: { name: 'ann', id: 'magic_ann' }, ...login }) })
    })
  })
  t.teardown(() => app.close())
  return base
}

const cookieLine = (res: Response, name: string): string | undefined => res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`))
const login = async (base: string, passwd: string) => await fetch(`${base}/auth/local/login`, { method: 'POST', body: new URLSearchParams({ user: 'ann', passwd }) })

t.test('a sign-in sets a readable, Lax cookie naming its provider; each provider names itself', async (t) => {
  const base = await start(t, { lastLoginMethod: true })
  const line = cookieLine(await login(base, 'right-password'), 'gatehouse_last_login')
  t.ok(line, 'set on a sign-in')
  t.match(line, /^gatehouse_last_login=local; Max-Age=15552000; Path=\/; SameSite=Lax$/, 'readable (no HttpOnly), Lax, whole site, 180 days, not Secure on http')
  const magic = cookieLine(await fetch(`${base}/auth/magic/login`), 'gatehouse_last_login')
  t.match(magic, /^gatehouse_last_login=magic;/)
  t.equal(cookieLine(await login(base, 'wrong'), 'gatehouse_last_login'), undefined, 'never on a refused login')
  const out = await fetch(`${base}/auth/logout`, { method: 'POST' })
  t.equal(cookieLine(out, 'gatehouse_last_login'), undefined, 'kept at logout: remembering the method across sessions is its point')
})

t.test('off by default; cookieName and maxAge; Secure on https', async (t) => {
  const off = await start(t, {})
  t.equal(cookieLine(await login(off, 'right-password'), 'gatehouse_last_login'), undefined)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: SECRET, url: 'https://app.example', lastLoginMethod: { cookieName: 'last_method', maxAge: '7d' } })
  await app.register(directProvider, { name: 'local', checker: () => true })
  const res = await app.inject({ method: 'POST', url: '/auth/local/login', headers: { host: 'app.example' }, payload: { user: 'ann', passwd: 'x' } })
  t.equal(res.statusCode, 200)
  const line = ([res.headers['set-cookie'] ?? []].flat() as string[]).find((l) => l.startsWith('last_method='))
  t.match(line, /^last_method=local; Max-Age=604800; Path=\/; Secure; SameSite=Lax$/)
})

t.test('bad options name the option', async (t) => {
  const register = async (value: unknown): Promise<void> => { await Fastify().register(authPlugin, { secret: SECRET, url: 'http://app.localhost', lastLoginMethod: value as never }) }
  await t.rejects(register({ cookieName: 'a;b' }), { option: 'lastLoginMethod.cookieName' })
  await t.rejects(register({ maxAge: 'forever' }), { option: 'lastLoginMethod.maxAge' })
  await t.rejects(register({ colour: 1 }), { option: 'lastLoginMethod.colour' })
  await t.rejects(register('yes'), { option: 'lastLoginMethod' })
})

t.test('after a password and an authenticator code it names the password\'s provider, not totp', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const app = await totp.startApp(t, {}, { lastLoginMethod: true })
  const alice = await totp.withTotp(app, 'alice')
  await alice.c.fetch('/auth/logout')
  const first = await totp.passwordLogin(alice.c, 'alice')
  t.equal(first.status, 401, 'the password asks for the code')
  t.equal(cookieLine(first, 'gatehouse_last_login'), undefined, 'not yet signed in: nothing set')
  clock.tick(30_000) // the enrolment's code is spent: the next time step's
  const done = await totp.secondStep(alice.c, { code: totp.oathtool(alice.secret) })
  t.equal(done.status, 200)
  t.match(cookieLine(done, 'gatehouse_last_login'), /^gatehouse_last_login=local;/, 'the method the user chose')
  await alice.c.fetch('/auth/logout')
  t.equal((await totp.passwordLogin(alice.c, 'alice')).status, 401)
  const recovery = await totp.secondStep(alice.c, { recoveryCode: alice.recoveryCodes[0] })
  t.equal(recovery.status, 200)
  t.match(cookieLine(recovery, 'gatehouse_last_login'), /^gatehouse_last_login=local;/, 'a recovery code too')
})

t.test('after a password and a passkey it names the password\'s provider; a passkey alone names passkey', async (t) => {
  const app = await passkey.startApp(t, { secondFactor: ['local'] }, { lastLoginMethod: true })
  const alice = await passkey.withPasskey(app, 'alice')
  t.equal((await passkey.passwordLogin(alice.c, 'alice')).status, 401)
  const second = await passkey.passkeyLogin(alice.c, alice.authn, alice.credential)
  t.equal(second.status, 200)
  t.match(cookieLine(second, 'gatehouse_last_login'), /^gatehouse_last_login=local;/)
  await alice.c.fetch('/auth/logout')
  const alone = await passkey.passkeyLogin(app.client(), alice.authn, alice.credential)
  t.equal(alone.status, 200)
  t.match(cookieLine(alone, 'gatehouse_last_login'), /^gatehouse_last_login=passkey;/, 'the passkey was the method chosen')
})
