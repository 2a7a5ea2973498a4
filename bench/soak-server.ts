/**
 * The server of the soak (`npm run bench -- soak`), in a process of its own started with `--expose-gc` by
 * bench/soak.ts: the root plugin with its defaults (throttling on, its login limit raised so that the load is
 * never refused; revocation and the session list on, in the default in-memory store), a direct provider and one
 * protected route; or the demo application (case `demo-mix`). `SOAK_CASE` picks the session lifetime and the
 * store's bounds (bench/soak-cases.ts). It listens on a loopback port, sends `{ port }`, then answers
 * `{ cmd: 'sample' }` with its memory after two full collections, its store's size and its verified-session
 * cache's, `{ cmd: 'snapshot' }` with the file of a heap snapshot it wrote (for finding what grows), and exits on
 * `{ cmd: 'stop' }` or when the parent goes away.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin } from '../auth.js'
import { buildDemo } from '../example/server.js'
import { MemoryStateStore } from '../stores/state/index.js'
import { coreOf } from '../plugins/core/signin/internals.js'
import { SOAK_CASES, SOAK_PASSWORD, type SoakSample } from './soak-cases.js'

const SECRET = 'bench-soak-secret-0123456789abcdef-0123456789abcdef'

const soakCase = SOAK_CASES[process.env.SOAK_CASE ?? '']
if (soakCase === undefined) {
  console.error(`soak-server: SOAK_CASE must be one of ${Object.keys(SOAK_CASES).join(', ')}`)
  process.exit(2)
}
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) {
  console.error('soak-server: run with --expose-gc')
  process.exit(2)
}

/** The app under soak: its own (a direct provider and `/api/me`), or the demo's; its store; how to close it. */
async function start (): Promise<{ app: FastifyInstance; store: MemoryStateStore; port: number; close: () => Promise<void> }> {
  if (soakCase!.demo === true) {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-soak-demo-'))
    const demo = await buildDemo({ PORT: '0', DEV_AUTH_PORT: '0', CUSTOM_AUTH_PORT: '0', AVATAR_STORE: `bolt://${join(dir, 'avatars.db')}` }, { out: () => {}, err: () => {} })
    const store = coreOf(demo.app).stateStore
    if (!(store instanceof MemoryStateStore)) throw new Error('soak-server: the demo\'s state store is not the memory store')
    return { app: demo.app, store, port: demo.port, close: async () => { await demo.close(); rmSync(dir, { recursive: true, force: true }) } }
  }
  const store = new MemoryStateStore(soakCase!.store)
  const app = Fastify()
  await app.register(authPlugin, {
    secret: SECRET,
    url: 'http://127.0.0.1',
    stateStore: store,
    session: soakCase!.session,
    rateLimit: { login: { max: 1_000_000_000, window: '1m' } },
    providers: [{ kind: 'direct', name: 'local', checker: (_user, passwd) => passwd === SOAK_PASSWORD }]
  })
  app.get('/api/me', { preHandler: app.auth.authenticate }, async (request) => ({ id: request.user!.id }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, store, port: (app.server.address() as { port: number }).port, close: async () => { await app.close() } }
}

const { app, store, port, close } = await start()

function sample (): SoakSample {
  gc!()
  gc!()
  const { heapUsed, rss } = process.memoryUsage()
  return { heapUsed, rss, entries: store.size, storeBytes: store.byteSize, cached: coreOf(app).tokens.cache.size }
}

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'sample') process.send!(sample())
  else if (message.cmd === 'snapshot') process.send!({ file: writeHeapSnapshot() })
  else void close().then(() => { process.exit(0) })
})
process.on('disconnect', () => { void close().finally(() => { process.exit(0) }) })
process.send!({ port })
