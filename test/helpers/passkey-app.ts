/**
 * Test helpers for passkeys: an app with the auth core, a direct provider `local` and the passkey provider,
 * answering over `inject` (test/helpers/app.ts), and the client steps (password sign-in, adding a passkey, signing
 * in with one).
 * The public URL is `http://localhost:8080` whatever address the requests name: passkeys are bound to it (RP id
 * `localhost`), and the software authenticator answers for that origin.
 */
import type { FastifyInstance } from 'fastify'
import { authPlugin, passkeyProvider, safeEqual, type AuthOptions, type PasskeyProviderOptions } from '../../index.js'
import { CookieJar, type Client } from './client.js'
import { injectApp } from './app.js'
import { SoftAuthenticator, type Lies, type SoftCredential } from './authenticator.js'

export const URL_BASE = 'http://localhost:8080'
export const SECRET = 'passkey-tests-secret-0123456789abcdef'
const USERS: Record<string, string> = { alice: 'alice-secret', bob: 'bob-secret', admin: 'admin-secret' }

export interface PasskeyApp { app: FastifyInstance; base: string; client(jar?: CookieJar): Client }

/** Starts an app; `passkey` and `core` options are added to the defaults. Closed by the test's teardown. */
export async function startApp (t: { teardown(fn: () => unknown): void }, passkey: PasskeyProviderOptions = {}, core: Partial<AuthOptions> = {}): Promise<PasskeyApp> {
  const { app, base, client } = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: URL_BASE,
      providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => Object.hasOwn(USERS, user) && safeEqual(USERS[user]!, passwd) }],
      ...core
    })
    await app.register(passkeyProvider, passkey)
  })
  t.teardown(() => app.close())
  return { app, base, client: (jar = new CookieJar()) => client(jar) }
}

/** The XSRF header of the client's cookie session. */
export function xsrf (c: Client): Record<string, string> {
  return { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' }
}

export async function passwordLogin (c: Client, user: string, passwd = USERS[user]!, query = ''): Promise<Response> {
  return await c.fetch(`/auth/local/login${query}`, { method: 'POST', json: { user, passwd } })
}

/** Signs in with the password (a user without a passkey gets a session). */
export async function signIn (c: Client, user: string): Promise<void> {
  const res = await passwordLogin(c, user)
  if (res.status !== 200) throw new Error(`password sign-in of ${user}: ${res.status} ${await res.text()}`)
}

export async function registerOptions (c: Client): Promise<Response> {
  return await c.fetch('/auth/passkey/register/options', { method: 'POST', headers: xsrf(c), json: {} })
}

/** Adds a passkey for the signed-in user through the authenticator; returns the answer and the credential. */
export async function addPasskey (c: Client, authn: SoftAuthenticator, lies: Lies = {}, extra: Record<string, unknown> = {}): Promise<{ res: Response; credential: SoftCredential }> {
  const opts = await registerOptions(c)
  if (opts.status !== 200) throw new Error(`register options: ${opts.status} ${await opts.text()}`)
  const { credential, json } = authn.create(await opts.json() as Parameters<SoftAuthenticator['create']>[0], lies)
  const res = await c.fetch('/auth/passkey/register', { method: 'POST', headers: xsrf(c), json: { ...json, ...extra } })
  return { res, credential }
}

export interface LoginOptions { challenge: string; rpId?: string; allowCredentials?: Array<{ id: string }>; userVerification?: string }

export async function loginOptions (c: Client, body: Record<string, unknown> = {}): Promise<LoginOptions> {
  const res = await c.fetch('/auth/passkey/login/options', { method: 'POST', json: body })
  if (res.status !== 200) throw new Error(`login options: ${res.status} ${await res.text()}`)
  return await res.json() as LoginOptions
}

/** Asks for options, has the authenticator answer with `credential`, posts the answer. */
export async function passkeyLogin (c: Client, authn: SoftAuthenticator, credential: SoftCredential, body: Record<string, unknown> = {}, lies: Lies = {}): Promise<Response> {
  const options = await loginOptions(c, body)
  return await c.fetch('/auth/passkey/login', { method: 'POST', json: authn.get(options, credential, lies) })
}

/** A fresh authenticator answering for the app's public origin. */
export function authenticator (): SoftAuthenticator {
  return new SoftAuthenticator(URL_BASE)
}

/** A signed-out browser of `user`, who holds one passkey (added during a password session). */
export async function withPasskey (app: PasskeyApp, user: string): Promise<{ c: Client; authn: SoftAuthenticator; credential: SoftCredential }> {
  const c = app.client()
  const authn = authenticator()
  await signIn(c, user)
  const { res, credential } = await addPasskey(c, authn)
  if (res.status !== 201) throw new Error(`adding a passkey for ${user}: ${res.status} ${await res.text()}`)
  await c.fetch('/auth/logout')
  return { c, authn, credential }
}
