/**
 * The servers of the login ladders (`npm run bench -- login`), each run in a process of its own by
 * bench/peer-server.ts:
 * - `login-bare`: a POST route parsing the same JSON body the password login gets, answering `{ ok: true }`;
 * - `password`: the root plugin with a direct provider whose checker only compares strings, throttling off
 *   (`rateLimit: false`); `password-throttled`: the same with throttling on as by default, its login limit
 *   raised so that the load is never refused (each login is then counted in the state store);
 * - `dev`, `dev-throttled`: the dev provider's OAuth2 server (in the same process) with `autoLoginUser`: a
 *   login is the start (state kept in the state store, redirect), the authorization (code), the callback (state
 *   taken, code exchanged and user info read over loopback HTTP, session issued).
 * The state store is the default in-memory one, wrapped to time what each call costs (the synchronous work of
 * the call, which is all of it for the memory store): `stats()` reports the µs spent in it and the calls.
 */
import Fastify from 'fastify'
import { authPlugin, type AuthOptions } from '../auth.js'
import { devProvider } from '../providers/index.js'
import { MemoryStateStore, type StateStore } from '../stores/state/index.js'
import type { Peer } from './peer-apps.js'
import { freePort } from './free-port.js'

export const LOGIN_NAMES = ['login-bare', 'password', 'password-throttled', 'dev', 'dev-throttled'] as const
export type LoginName = typeof LOGIN_NAMES[number]

const SECRET = 'bench-login-secret-0123456789abcdef-0123456789abcdef'
export const LOGIN_BODY = JSON.stringify({ user: 'bench', passwd: 'bench-password' })
/** Raised far above any load, so that throttling counts every login and refuses none. */
export const THROTTLED = { login: { max: 1_000_000_000, window: '1m' } }

/** What a timed store has spent: µs in its calls, and how many calls. */
export interface StoreStats { storeUs: number; storeCalls: number }

/** The store with every call timed (the part that runs before its promise is returned). */
function timedStore (inner: StateStore, stats: StoreStats): StateStore {
  const wrap = <A extends unknown[], R>(fn: ((...args: A) => R) | undefined): ((...args: A) => R) | undefined =>
    fn === undefined
      ? undefined
      : (...args: A) => {
          const start = process.hrtime.bigint()
          try { return fn.apply(inner, args) } finally {
            stats.storeUs += Number(process.hrtime.bigint() - start) / 1_000
            stats.storeCalls++
          }
        }
  const store: Record<string, unknown> = {}
  for (const method of ['setIfAbsent', 'set', 'increment', 'get', 'take', 'delete', 'publish', 'subscribe'] as const) {
    const fn = wrap(inner[method] as ((...args: unknown[]) => unknown) | undefined)
    if (fn !== undefined) store[method] = fn
  }
  store.close = () => inner.close()
  return store as unknown as StateStore
}

async function loginBare (): Promise<Peer> {
  const app = Fastify()
  app.post('/auth/local/login', async (req) => ({ ok: (req.body as { user?: string }).user !== undefined }))
  return { app, cookies: [], headers: {}, check: async () => undefined }
}

/** The root plugin on a known port with a timed memory store; `extra` adds providers or options. */
async function gatehouse (throttled: boolean, extra: Partial<AuthOptions>, setup?: (app: ReturnType<typeof Fastify>) => Promise<void>): Promise<Peer> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const stats: StoreStats = { storeUs: 0, storeCalls: 0 }
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => SECRET,
    url,
    avatar: false,
    stateStore: timedStore(new MemoryStateStore({ maxEntries: 1_000_000, maxPerClient: 1_000_000 }), stats),
    rateLimit: throttled ? THROTTLED : false,
    ...extra
  })
  if (setup !== undefined) await setup(app)
  // A browser's headers on a login form post of the app's own page.
  return { app, port, cookies: [], headers: { origin: url, 'sec-fetch-site': 'same-origin' }, check: async () => undefined, stats: () => ({ ...stats }) }
}

const password = (throttled: boolean) => (): Promise<Peer> => gatehouse(throttled, {
  providers: [{ kind: 'direct', name: 'local', checker: (user: string, passwd: string) => user === 'bench' && passwd === 'bench-password' }]
})

const dev = (throttled: boolean) => (): Promise<Peer> => gatehouse(throttled, {}, async (app) => {
  await app.register(devProvider, { port: 0, withLoginPage: false, autoLoginUser: 'bench' })
})

export const LOGIN_APPS: Record<LoginName, () => Promise<Peer>> = {
  'login-bare': loginBare,
  password: password(false),
  'password-throttled': password(true),
  dev: dev(false),
  'dev-throttled': dev(true)
}
