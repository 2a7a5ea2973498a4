/**
 * One server of the peer table, the login and hook ladders or the toolkit tables in a process of its own: `node
 * dist/bench/peer-server.js <name>`, started by bench/server-process.ts or bench/callgrind.ts with an IPC channel.
 * It builds the app (bench/peer-apps.ts, login-apps.ts, toolkit-apps.ts, ladder-apps.ts, scale-app.ts), listens
 * on a loopback port and sends `{ port, cookies, headers }`;
 * then it answers messages:
 * - `{ cmd: 'cpu' }` → `{ cpu, stats }`: this process's CPU time so far (µs, user + system), and the app's
 *   own counters;
 * - `{ cmd: 'check', headers, ms }` → `{ check }`: the peer's session check called in a loop for `ms`
 *   milliseconds, after a warm-up, as mean µs per call;
 * - `{ cmd: 'gc' }` → `{ gc: true, heap }`: a collection of the young generation first, when the process runs
 *   with `--expose-gc` (bench/callgrind.ts starts each measured phase on an empty one), `{ gc: false }` otherwise;
 *   `heap`: the bytes of heap in use then;
 * - `{ cmd: 'heap' }` → `{ heap }`: the bytes of heap in use now (with no collection since the last `gc`, what the
 *   requests in between allocated is the difference);
 * - `{ cmd: 'stop' }`: closes the server and exits.
 */
import { PEERS, cookieObject, type Peer } from './peer-apps.js'
import { LOGIN_APPS } from './login-apps.js'
import { TOOLKIT_APPS } from './toolkit-apps.js'
import { scaleApp } from './scale-app.js'
import { LADDER_APPS } from './ladder-apps.js'

const APPS: Record<string, () => Promise<Peer>> = { ...PEERS, ...LOGIN_APPS, ...TOOLKIT_APPS, ...LADDER_APPS, scale: scaleApp }

type Command = { cmd: 'cpu' } | { cmd: 'check'; headers: Record<string, string>; ms: number } | { cmd: 'gc' } | { cmd: 'heap' } | { cmd: 'stop' }

function send (message: object): void {
  process.send!(message)
}

function cpuNow (): number {
  const { user, system } = process.cpuUsage()
  return user + system
}

/** Mean µs per call of the peer's check: calls in batches until `ms` milliseconds have passed. */
async function timeCheck (peer: Peer, headers: Record<string, string>, ms: number): Promise<number> {
  const check = peer.check
  if (check === undefined) return 0
  const cookies = cookieObject(headers.cookie)
  for (let i = 0; i < 2_000; i++) await check(headers, cookies)
  const start = process.hrtime.bigint()
  const until = start + BigInt(ms) * 1_000_000n
  let calls = 0
  let now = start
  while (now < until) {
    for (let i = 0; i < 500; i++) await check(headers, cookies)
    calls += 500
    now = process.hrtime.bigint()
  }
  return Number(now - start) / 1_000 / calls
}

/**
 * A collection of the young generation, when `--expose-gc` made `gc` available. Not a full one: V8 throws away
 * the optimised code of every function at a full collection asked for by `gc()` (measured: some 65 functions of
 * Node's HTTP stack and Fastify compiled again after each, 400,000 instructions per request of the next 1,500),
 * where the collections that come by themselves keep it.
 */
function collect (): boolean {
  const gc = (globalThis as { gc?: (o?: { type: 'minor' }) => void }).gc
  if (gc === undefined) return false
  gc({ type: 'minor' })
  return true
}

const name = process.argv[2] ?? ''
if (!Object.hasOwn(APPS, name)) {
  console.error(`peer-server: unknown app ${name}; choose from ${Object.keys(APPS).join(', ')}`)
  process.exit(2)
}
const peer = await APPS[name]!()
await peer.app.listen({ port: peer.port ?? 0, host: '127.0.0.1' })
const { port } = peer.app.server.address() as { port: number }
process.on('message', (message: Command) => {
  if (message.cmd === 'cpu') send({ cpu: cpuNow(), stats: peer.stats?.() ?? {} })
  else if (message.cmd === 'check') void timeCheck(peer, message.headers, message.ms).then((check) => { send({ check }) })
  else if (message.cmd === 'gc') send({ gc: collect(), heap: process.memoryUsage().heapUsed })
  else if (message.cmd === 'heap') send({ heap: process.memoryUsage().heapUsed })
  else void peer.app.close().then(() => { process.exit(0) })
})
// The parent going away ends this process too (no server left behind).
process.on('disconnect', () => { process.exit(0) })
send({ port, cookies: peer.cookies, headers: peer.headers })
