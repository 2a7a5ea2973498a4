/**
 * The instance of the scale benchmark (`npm run bench -- scale`), run in a process of its own by
 * bench/peer-server.ts, several at once on one shared store: the root plugin on the Redis address in
 * `GATEHOUSE_BENCH_STORE`, a direct provider `local` (any user, password `bench-password`), the dev OAuth2
 * provider (its server in the same process, `autoLoginUser`), an e-mail provider `email` whose sender keeps the
 * last message per address in this process (`GET /bench/outbox?address=` hands its token out once, standing in
 * for the user's mailbox), throttling on as by default (its login limit raised so that the load is never
 * refused), `/private` behind `authenticate`, and a registered device client `bench` whose first token pair
 * `POST /bench/pair` hands out for the user named in the body (as an app signing a user in itself; the refresh
 * grants then go through `POST /auth/token`). `GATEHOUSE_BENCH_TOKEN_MS` sets `session.tokenDuration` (default
 * 15 minutes), so that a run can make its sessions refresh. Every call to the state store is timed until its
 * answer comes back (`stats()`: calls and µs), so the table can show the store's latency as the app sees it.
 */
import Fastify from 'fastify'
import { authPlugin } from '../auth.js'
import { devProvider } from '../providers/index.js'
import { RedisStateStore } from '../stores/state/redis.js'
import type { StateStore } from '../stores/state/index.js'
import type { Peer } from './peer-apps.js'
import { THROTTLED, type StoreStats } from './login-apps.js'
import { freePort } from './free-port.js'

const SECRET = 'bench-scale-secret-0123456789abcdef-0123456789abcdef'
export const SCALE_PASSWORD = 'bench-password'
/** The registered client whose refresh grants the scale and refresh benchmarks measure. */
export const GRANT_CLIENT = 'bench'

const TIMED = ['setIfAbsent', 'set', 'increment', 'get', 'take', 'delete', 'publish'] as const

/**
 * Times the store's calls in place (the store stays the instance the plugin and its companions recognise:
 * the session list and throttling use its Redis connection directly, and those commands are not counted here).
 */
function timeCallsOf (store: StateStore, stats: StoreStats): void {
  const methods = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  for (const name of TIMED) {
    const inner = methods[name]!.bind(store)
    methods[name] = async (...args) => {
      const start = process.hrtime.bigint()
      try { return await inner(...args) } finally {
        stats.storeUs += Number(process.hrtime.bigint() - start) / 1_000
        stats.storeCalls++
      }
    }
  }
}

export async function scaleApp (): Promise<Peer> {
  const address = process.env.GATEHOUSE_BENCH_STORE
  if (address === undefined) throw new Error('scale app: GATEHOUSE_BENCH_STORE (a Redis address) is not set')
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const stats: StoreStats = { storeUs: 0, storeCalls: 0 }
  const store = new RedisStateStore(address, { maxPerClient: 1_000_000 })
  timeCallsOf(store, stats)
  const tokenMs = process.env.GATEHOUSE_BENCH_TOKEN_MS
  const outbox = new Map<string, string>()
  const app = Fastify()
  app.addHook('onClose', async () => { await store.close() })
  await app.register(authPlugin, {
    secret: () => SECRET,
    url,
    avatar: false,
    stateStore: store,
    // Every simulated user comes from 127.0.0.1: the per-IP limit of confirmation messages is raised like the login one.
    rateLimit: { ...THROTTLED, sends: { perIp: 1_000_000_000 } },
    session: tokenMs === undefined ? {} : { tokenDuration: Number(tokenMs) },
    clients: [{ id: GRANT_CLIENT, kind: 'device' }],
    providers: [
      { kind: 'direct', name: 'local', checker: (_user: string, passwd: string) => passwd === SCALE_PASSWORD },
      { kind: 'verify', name: 'email', template: '{{.Token}}', sender: (address: string, text: string) => { outbox.set(address, text) } }
    ]
  })
  await app.register(devProvider, { port: 0, withLoginPage: false, autoLoginUser: 'bench' })
  app.get<{ Querystring: { address: string } }>('/bench/outbox', async (req, reply) => {
    const token = outbox.get(req.query.address)
    outbox.delete(req.query.address)
    return token === undefined ? await reply.code(404).send({ error: 'no message' }) : { token }
  })
  app.post<{ Body: { user: string } }>('/bench/pair', async (req) =>
    await app.auth.tokens.issuePair(req, GRANT_CLIENT, { user: { id: `bench_${req.body.user}`, name: req.body.user } }))
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  return { app, port, cookies: [], headers: { origin: url, 'sec-fetch-site': 'same-origin' }, check: async () => undefined, stats: () => ({ ...stats }) }
}
