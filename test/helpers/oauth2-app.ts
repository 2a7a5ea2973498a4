/**
 * The app under test: Fastify + the real root plugin (`authPlugin`) on 127.0.0.1 port 0, with the public URL
 * `http://app.test` that the test browser resolves to that port. The avatar proxy is replaced by a recorder
 * so tests can see which picture link a login handed over. Providers are added by `setup`, either as plugins
 * (`app.register(oauth2Provider, …)`) or through the `app.auth.add*` wrappers; both load when the app starts.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type {} from '../../augment.js'
import { authPlugin, type AuthOptions } from '../../auth.js'
import { Browser } from './oauth2-browser.js'
import { coreOf } from '../../plugins/core/signin/internals.js'

export const APP_URL = 'http://app.test'

export interface TestApp {
  app: FastifyInstance
  /** Picture links handed to the avatar proxy, in order. */
  avatars: Array<string | undefined>
  /** A fresh browser that resolves app.test to this app. */
  browser(): Browser
  close(): Promise<void>
}

/** The app with the root plugin loaded but not started: for registration tests. The caller closes it. */
export async function bootApp (opts: Partial<AuthOptions> = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'oauth2-test-secret-0123456789abcdef', url: APP_URL, ...opts })
  return app
}

/**
 * Starts the app: root plugin, `setup` (which registers the providers), listen. A provider failing to load
 * makes this reject (the app is closed then).
 */
export async function startApp (setup: (app: FastifyInstance) => unknown, opts: Partial<AuthOptions> = {}): Promise<TestApp> {
  const app = Fastify({ forceCloseConnections: true })
  await app.register(authPlugin, { secret: () => 'oauth2-test-secret-0123456789abcdef', url: APP_URL, ...opts })
  const avatars: Array<string | undefined> = []
  coreOf(app).avatar = {
    async save (_id, source) {
      avatars.push(source.url)
      return undefined
    }
  }
  try {
    await setup(app)
    await app.listen({ port: 0, host: '127.0.0.1' })
  } catch (err) {
    await app.close().catch(() => {})
    throw err
  }
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  return {
    app,
    avatars,
    browser () {
      const b = new Browser()
      b.hosts.set(new URL(opts.url ?? APP_URL).host, base)
      return b
    },
    close: async () => { await app.close() }
  }
}

/**
 * The error a registration makes the app fail with at start (`setup` registers the providers); the app is
 * closed. Resolves undefined when the app starts.
 */
export async function bootError (setup: (app: FastifyInstance) => unknown, opts: Partial<AuthOptions> = {}): Promise<unknown> {
  const app = await bootApp(opts)
  try {
    await setup(app)
    await app.ready()
    return undefined
  } catch (err) {
    return err
  } finally {
    await app.close().catch(() => {})
  }
}

/** `GET /auth/user` as a page script would call it: session cookie plus the XSRF header from its cookie. */
export async function currentUser (browser: Browser, url = APP_URL): Promise<{ status: number; body: Record<string, unknown> }> {
  const xsrf = browser.cookieFor(`${url}/auth/user`, 'XSRF-TOKEN')
  const res = await browser.request(`${url}/auth/user`, { headers: xsrf === undefined ? {} : { 'x-xsrf-token': xsrf } })
  return { status: res.status, body: await res.json() as Record<string, unknown> }
}
