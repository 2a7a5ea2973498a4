/**
 * The server of the soak (`npm run bench -- soak`), in a process of its own started with `--expose-gc` by
 * bench/soak.ts: the root plugin with its defaults (throttling on, its login limit raised so that the load is
 * never refused; revocation and the session list on, in the default in-memory store), a direct provider and one
 * protected route. `SOAK_CASE` picks the session lifetime and the store's bounds (bench/soak-cases.ts). It listens on a
 * loopback port, sends `{ port }`, then answers `{ cmd: 'sample' }` with its memory after two full collections
 * its store's size and its verified-session cache's, and exits on `{ cmd: 'stop' }` or when the parent goes away.
 */
import Fastify from 'fastify'
import { authPlugin } from '../auth.js'
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

const store = new MemoryStateStore(soakCase.store)
const app = Fastify()
await app.register(authPlugin, {
  secret: SECRET,
  url: 'http://127.0.0.1',
  stateStore: store,
  session: soakCase.session,
  rateLimit: { login: { max: 1_000_000_000, window: '1m' } },
  providers: [{ kind: 'direct', name: 'local', checker: (_user, passwd) => passwd === SOAK_PASSWORD }]
})
app.get('/api/me', { preHandler: app.auth.authenticate }, async (request) => ({ id: request.user!.id }))
await app.listen({ port: 0, host: '127.0.0.1' })

function sample (): SoakSample {
  gc!()
  gc!()
  const { heapUsed, rss } = process.memoryUsage()
  return { heapUsed, rss, entries: store.size, storeBytes: store.byteSize, cached: coreOf(app).tokens.cache.size }
}

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'sample') process.send!(sample())
  else void app.close().then(() => { process.exit(0) })
})
process.on('disconnect', () => { process.exit(0) })
process.send!({ port: (app.server.address() as { port: number }).port })
