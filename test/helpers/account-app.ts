/**
 * Test helper for the account-security tests (factor changes, step-up, stolen sessions): one app with a password
 * provider `local`, authenticator apps (the second factor of `local`), passkeys, the session list and a route
 * behind `recent()`, answered over `inject`. Clients keep cookie jars (a thief's is a copy of the owner's), codes
 * come from Debian's `oathtool`, passkey answers from the software authenticator, audit events are collected.
 */
import type { FastifyInstance } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, passkeyProvider, safeEqual, totpProvider, type AuthOptions, type TotpProviderOptions } from '../../index.js'
import type { AuditEvent } from '../../lib/audit/events.js'
import { injectApp } from './app.js'
import { CookieJar, type Client } from './client.js'
import { SoftAuthenticator, type SoftCredential } from './authenticator.js'
import { KEY, oathtool } from './totp-app.js'

export const URL_BASE = 'http://localhost:8080'
export const SECRET = 'account-tests-secret-0123456789abcdef'
export const PASSWORDS: Record<string, string> = { alice: 'alice-secret', bob: 'bob-secret' }
/** A fixed instant in the middle of a 30-second step, so that steps are exact. */
export const START = Date.UTC(2026, 10, 25, 12, 0, 15)

/** A fake clock (`Date` only) from `START`, uninstalled at the test's end. */
export function fakeClock (t: { teardown(fn: () => unknown): void }): ReturnType<typeof FakeTimers.install> {
  const clock = FakeTimers.install({ now: START, toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  return clock
}

export interface AccountApp {
  app: FastifyInstance
  /** A browser with an empty cookie jar. */
  client(): Client
  /** A browser holding a copy of `c`'s cookies (a stolen session). */
  copyOf(c: Client): Client
  /** Every audit event so far. */
  events: AuditEvent[]
}

/** The app; `core` and `totp` options are added to the defaults. Closed by the test's teardown. */
export async function accountApp (t: { teardown(fn: () => unknown): void }, core: Partial<AuthOptions> = {}, totp: Partial<TotpProviderOptions> = {}): Promise<AccountApp> {
  const events: AuditEvent[] = []
  const injected = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: URL_BASE,
      rateLimit: { login: { max: 10_000 } },
      onEvent: (e) => { events.push(e) },
      providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => Object.hasOwn(PASSWORDS, user) && safeEqual(PASSWORDS[user]!, passwd) }],
      ...core
    })
    await app.register(totpProvider, { encryptionKey: KEY, secondFactor: ['local'], ...totp })
    await app.register(passkeyProvider, {})
    app.post('/change-password', { preHandler: app.auth.recent({ within: '5m' }) }, async () => ({ status: 'changed' }))
  })
  t.teardown(() => injected.app.close())
  return {
    app: injected.app,
    client: () => injected.client(),
    copyOf: (c) => {
      const jar = new CookieJar()
      for (const [name, cookie] of c.jar.cookies) jar.cookies.set(name, { ...cookie })
      return injected.client(jar)
    },
    events
  }
}

/** The XSRF header of a client's cookie session. */
export function xsrf (c: Client): Record<string, string> {
  return { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' }
}

/** A session request: the client's cookies, its XSRF header and a JSON body. */
export async function call (c: Client, method: string, path: string, json: Record<string, unknown> = {}): Promise<Response> {
  return await c.fetch(path, { method, headers: xsrf(c), json })
}

export async function passwordLogin (c: Client, user: string, passwd = PASSWORDS[user]!): Promise<Response> {
  return await c.fetch('/auth/local/login', { method: 'POST', json: { user, passwd } })
}

/** Signs in with the password alone (a user without a second factor). */
export async function signIn (c: Client, user: string): Promise<void> {
  const res = await passwordLogin(c, user)
  if (res.status !== 200) throw new Error(`password sign-in of ${user}: ${res.status} ${await res.text()}`)
}

/** Signs in with the password, then a code of `secret` (`step` steps from now). */
export async function signInWithCode (c: Client, user: string, secret: string, step = 0): Promise<void> {
  const pw = await passwordLogin(c, user)
  if (pw.status !== 401) throw new Error(`password step of ${user}: ${pw.status} ${await pw.text()}`)
  const res = await c.fetch('/auth/totp/login', { method: 'POST', json: { code: oathtool(secret, Date.now(), step) } })
  if (res.status !== 200) throw new Error(`code step of ${user}: ${res.status} ${await res.text()}`)
}

/** Adds an authenticator app in the client's session (`body` re-authenticates when needed): its secret and recovery codes. */
export async function addApp (c: Client, body: Record<string, unknown> = {}): Promise<{ secret: string; recoveryCodes: string[] }> {
  const res = await call(c, 'POST', '/auth/totp/enrol', body)
  if (res.status !== 201) throw new Error(`enrol: ${res.status} ${await res.text()}`)
  const { secret } = await res.json() as { secret: string }
  const confirmed = await call(c, 'POST', '/auth/totp/enrol/confirm', { code: oathtool(secret) })
  if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status} ${await confirmed.text()}`)
  const { recoveryCodes } = await confirmed.json() as { recoveryCodes: string[] }
  return { secret, recoveryCodes }
}

/** A software authenticator answering for the app's public origin. */
export function authenticator (): SoftAuthenticator {
  return new SoftAuthenticator(URL_BASE)
}

/** Adds a passkey in the client's session (`body` re-authenticates the options when needed). */
export async function addPasskey (c: Client, authn: SoftAuthenticator, body: Record<string, unknown> = {}): Promise<SoftCredential> {
  const opts = await call(c, 'POST', '/auth/passkey/register/options', body)
  if (opts.status !== 200) throw new Error(`register options: ${opts.status} ${await opts.text()}`)
  const { credential, json } = authn.create(await opts.json() as Parameters<SoftAuthenticator['create']>[0])
  const res = await call(c, 'POST', '/auth/passkey/register', json)
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`)
  return credential
}

/** A passkey assertion re-authenticating the client's session (`POST …/reauth/options`, answered by `credential`). */
export async function passkeyAssertion (c: Client, authn: SoftAuthenticator, credential: SoftCredential): Promise<Record<string, unknown>> {
  const res = await call(c, 'POST', '/auth/passkey/reauth/options')
  if (res.status !== 200) throw new Error(`reauth options: ${res.status} ${await res.text()}`)
  return authn.get(await res.json() as Parameters<SoftAuthenticator['get']>[0], credential)
}

/** The session id (`jti`) of a signed-in client: its XSRF cookie. */
export function sessionIdOf (c: Client): string {
  return c.jar.get('XSRF-TOKEN')!
}

/** Whether the client's session still works (GET /auth/user). */
export async function signedIn (c: Client): Promise<boolean> {
  const res = await c.fetch('/auth/user', { headers: xsrf(c) })
  return res.status === 200
}
