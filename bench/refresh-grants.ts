/**
 * `npm run bench -- refresh`: the refresh grant of the registered clients on one Redis server, in this process
 * (Fastify's inject, no sockets: what is measured is the grant, its signing and its store round trips).
 * `CONCURRENCY` families refresh one after another for `BENCH_SECONDS` (default 5), each using the refresh token
 * its last grant answered (rotation on every use); printed: grants per second and Redis commands per grant, from
 * `INFO commandstats` before and after.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { authPlugin } from '../auth.js'
import { freePort, ownData, RedisNodeProcess } from './redis-processes.js'
import { GRANT_CLIENT } from './scale-app.js'
import { refreshGrantBody } from './scale-client.js'

const CONCURRENCY = 16

async function commands (admin: Redis): Promise<number> {
  let total = 0
  for (const [, calls] of (await admin.info('commandstats')).matchAll(/cmdstat_[\w|]+:calls=(\d+)/g)) total += Number(calls)
  return total
}

export async function benchRefreshGrants (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-refresh-'))
  const port = await freePort()
  const redis = new RedisNodeProcess(port, ownData(dir, port))
  await redis.start()
  const admin = new Redis({ port, host: '127.0.0.1' })
  const app = Fastify()
  try {
    await app.register(authPlugin, {
      secret: 'bench-refresh-secret-0123456789abcdef-0123456789',
      url: 'http://127.0.0.1',
      stateStore: `redis://127.0.0.1:${port}`,
      clients: [{ id: GRANT_CLIENT, kind: 'device' }]
    })
    app.post<{ Body: { n: number } }>('/pair', async (req) => await app.auth.tokens.issuePair(req, GRANT_CLIENT, { user: { id: `u-${req.body.n}`, name: `u${req.body.n}` } }))
    await app.ready()
    const seconds = Number(process.env.BENCH_SECONDS ?? 5)
    const tokens = await Promise.all(Array.from({ length: CONCURRENCY }, async (_, n) => (await app.inject({ method: 'POST', url: '/pair', payload: { n } })).json<{ refresh_token: string }>().refresh_token))
    const before = await commands(admin)
    const until = Date.now() + seconds * 1000
    let grants = 0
    await Promise.all(tokens.map(async (first) => {
      let token = first
      while (Date.now() < until) {
        const r = await app.inject({ method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: refreshGrantBody(token) })
        if (r.statusCode !== 200) throw new Error(`refresh answered ${r.statusCode}: ${r.body}`)
        token = r.json<{ refresh_token: string }>().refresh_token
        grants++
      }
    }))
    // The INFO call itself is one command.
    const used = await commands(admin) - before - 1
    console.log(`refresh grants (one Redis, ${CONCURRENCY} families at once, ${seconds} s): ${Math.round(grants / seconds)} grants/s, ${(used / grants).toFixed(2)} Redis commands per grant`)
  } finally {
    await app.close()
    admin.disconnect()
    await redis.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}
