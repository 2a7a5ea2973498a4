/**
 * `npm run bench -- refresh`: the refresh grant of the registered clients, in this process (Fastify's inject, no
 * sockets: what is measured is the grant, its signing and its store round trips), on the three Redis setups of the
 * scale bench (one server, a Cluster of 3 masters + 3 replicas, 1 master + 1 replica behind 3 Sentinels; BENCH_STORES
 * to pick, e.g. `one,cluster`). Per setup:
 * - Redis commands per grant, over `SEQUENTIAL` grants made one after another (`INFO commandstats` of the masters:
 *   the calls inside scripts counted, the client's own housekeeping not), and the sequential round trips of one
 *   grant: commands sent while none of the store's was in flight start a round trip (the store's client is
 *   watched; commands sent together are one);
 * - the commands of one grant as the masters' `MONITOR` shows them (a script's calls beside it);
 * - grants per second with `CONCURRENCY` families refreshing at once for BENCH_SECONDS (default 5), each with the
 *   token its last grant answered (rotation on every use).
 * Targets (issue 46): <= 8 commands and <= 3 round trips per grant on every setup.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis, type Cluster } from 'ioredis'
import { authPlugin } from '../auth.js'
import { RedisStateStore } from '../stores/state/redis.js'
import { GRANT_CLIENT } from './scale-app.js'
import { refreshGrantBody } from './scale-client.js'
import { perUnit, STORES, totals, type StoreKind, type StoreSetup } from './scale-redis.js'

const CONCURRENCY = 16
const SEQUENTIAL = 200
const MAX_COMMANDS = 8
const MAX_ROUND_TRIPS = 3

/** Counts the round trips of a client: a command sent while none of its commands is in flight starts one. */
function watchRoundTrips (client: Redis | Cluster): { rounds: () => number } {
  let inFlight = 0
  let rounds = 0
  const send = client.sendCommand.bind(client) as (command: { promise: Promise<unknown> }, ...rest: unknown[]) => unknown
  ;(client as { sendCommand: unknown }).sendCommand = (command: { promise: Promise<unknown> }, ...rest: unknown[]) => {
    if (inFlight++ === 0) rounds++
    const settle = (): void => { inFlight-- }
    command.promise.then(settle, settle)
    return send(command, ...rest)
  }
  return { rounds: () => rounds }
}

async function grantApp (store: RedisStateStore): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, {
    secret: 'bench-refresh-secret-0123456789abcdef-0123456789',
    url: 'http://127.0.0.1',
    stateStore: store,
    clients: [{ id: GRANT_CLIENT, kind: 'device' }]
  })
  app.post<{ Body: { n: number } }>('/pair', async (req) => await app.auth.tokens.issuePair(req, GRANT_CLIENT, { user: { id: `u-${req.body.n}`, name: `u${req.body.n}` } }))
  await app.ready()
  return app
}

async function firstToken (app: FastifyInstance, n: number): Promise<string> {
  return (await app.inject({ method: 'POST', url: '/pair', payload: { n } })).json<{ refresh_token: string }>().refresh_token
}

async function grant (app: FastifyInstance, token: string): Promise<string> {
  const r = await app.inject({ method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: refreshGrantBody(token) })
  if (r.statusCode !== 200) throw new Error(`refresh answered ${r.statusCode}: ${r.body}`)
  return r.json<{ refresh_token: string }>().refresh_token
}

/** The commands the masters run during `run`, as MONITOR prints them (`[0 lua]` marks a script's own call). */
async function monitored (setup: StoreSetup, run: () => Promise<void>): Promise<string[]> {
  const lines: string[] = []
  const monitors: Array<{ disconnect: () => void }> = []
  for (const port of setup.nodes()) {
    const admin = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 })
    const role = await admin.role() as [string]
    if (role[0] !== 'master') { admin.disconnect(); continue }
    const monitor = await admin.monitor()
    admin.disconnect()
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (args[0]!.toLowerCase() !== 'monitor') lines.push(`${port} ${source.includes('lua') ? '  (script) ' : ''}${args.map((a) => a.length > 40 ? a.slice(0, 37) + '...' : a).join(' ')}`)
    })
    monitors.push(monitor)
  }
  await run()
  // MONITOR's lines come after the answers: a moment for the last ones.
  await new Promise((resolve) => setTimeout(resolve, 300))
  for (const m of monitors) m.disconnect()
  return lines
}

async function onSetup (kind: StoreKind, seconds: number): Promise<string> {
  const setup = await STORES[kind]()
  const store = new RedisStateStore(setup.address)
  const app = await grantApp(store)
  try {
    const watch = watchRoundTrips(store.client)
    let token = await firstToken(app, 0)
    token = await grant(app, token)
    const lines = await monitored(setup, async () => { token = await grant(app, token) })
    console.log(`\n${setup.label}: one refresh grant under MONITOR (${lines.filter((l) => !l.includes('(script)')).length} sent, ${lines.length} run):\n  ${lines.join('\n  ')}`)
    const before = await totals(setup)
    const roundsBefore = watch.rounds()
    for (let i = 0; i < SEQUENTIAL; i++) token = await grant(app, token)
    const rounds = (watch.rounds() - roundsBefore) / SEQUENTIAL
    const per = perUnit(await totals(setup), before, SEQUENTIAL)
    const tokens = await Promise.all(Array.from({ length: CONCURRENCY }, async (_, n) => await firstToken(app, n + 1)))
    const until = Date.now() + seconds * 1000
    let grants = 0
    await Promise.all(tokens.map(async (first) => {
      let t = first
      while (Date.now() < until) {
        t = await grant(app, t)
        grants++
      }
    }))
    const verdict = per.commands <= MAX_COMMANDS && rounds <= MAX_ROUND_TRIPS ? 'PASS' : 'FAIL'
    return `${setup.label.padStart(14)} ${per.commands.toFixed(2).padStart(9)} ${per.evals.toFixed(2).padStart(6)} ${rounds.toFixed(2).padStart(12)} ${Math.round(grants / seconds).toString().padStart(9)}  ${verdict}`
  } finally {
    await app.close()
    await store.close()
    await setup.stop()
  }
}

export async function benchRefreshGrants (): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5)
  const kinds = (process.env.BENCH_STORES ?? 'one,cluster,sentinel').split(',').map((k) => k.trim()) as StoreKind[]
  const rows: string[] = []
  for (const kind of kinds) rows.push(await onSetup(kind, seconds))
  console.log(`\n## refresh grants: Redis commands (masters, scripts' calls counted) and round trips per grant, ${SEQUENTIAL} grants one at a time; grants/s with ${CONCURRENCY} families at once for ${seconds} s`)
  console.log(`${'setup'.padStart(14)} ${'commands'.padStart(9)} ${'evals'.padStart(6)} ${'round trips'.padStart(12)} ${'grants/s'.padStart(9)}  target (<= ${MAX_COMMANDS} commands, <= ${MAX_ROUND_TRIPS} round trips)`)
  for (const row of rows) console.log(row)
}
