/**
 * The peer table, `npm run bench -- peers`: the same GET route behind each library's session check (the peers
 * of bench/peer-apps.ts), every server in a process of its own (bench/peer-server.ts) and autocannon in another,
 * in alternating rounds, medians. Every server receives the same request bytes: one Cookie header holding every
 * peer's session cookie, and gatehouse's XSRF header. Printed per peer: req/s, ratio to the bare route, the
 * server's CPU µs per request, p99 latency, and the session check alone called in process (µs per call).
 * Targets (issue 39, server CPU per request): gatehouse >= 0.95 of the bare route, >= 2x less than @fastify/jwt with
 * and without its verify cache, and ahead of every other peer.
 * BENCH_ROUNDS (default 5), BENCH_SECONDS (default 5), BENCH_WARMUP (default 1), BENCH_CHECK_MS (default 1000)
 * set the lengths.
 */
import { median, type BenchRequest } from './lib.js'
import { PEER_NAMES, type PeerName } from './peer-apps.js'
import { ask, lengths, loadServer, startServer, stopServer, type LoadLengths, type ServerProcess, type ServerRun } from './server-process.js'
/** Issue 39: at least 2x less server CPU per request than @fastify/jwt (with its cache too), and 0.95 of bare. */
const JWT_TARGET = 2
const BARE_TARGET = 0.95

const LABELS: Record<PeerName, string> = {
  bare: 'bare route (same request bytes)',
  gatehouse: 'gatehouse authenticate',
  'fastify-jwt': '@fastify/jwt jwtVerify (cookie)',
  'fastify-jwt-cached': '@fastify/jwt jwtVerify, verify cache on',
  'secure-session': '@fastify/secure-session',
  'fastify-session': '@fastify/session (memory store)',
  'better-auth-cache': 'better-auth getSession, cookieCache on',
  'better-auth': 'better-auth getSession, memory adapter'
}

type Server = ServerProcess<PeerName>
type Run = ServerRun

/** The request every server receives: each peer's cookies in one header, and every peer's headers. */
function sharedRequest (servers: Server[]): BenchRequest {
  const cookies = servers.flatMap((s) => s.hello.cookies)
  const headers = Object.assign({}, ...servers.map((s) => s.hello.headers)) as Record<string, string>
  return { path: '/r', headers: { ...headers, cookie: cookies.join('; ') } }
}

/** One round: every server started, loaded in turn, its check timed (last round only), all stopped. */
async function round (names: readonly PeerName[], runs: Map<PeerName, Run[]>, checks: Map<PeerName, number> | undefined, len: LoadLengths): Promise<void> {
  const servers: Server[] = []
  try {
    for (const name of names) servers.push(await startServer(name))
    const req = sharedRequest(servers)
    for (const s of servers) runs.get(s.name)!.push(await loadServer(s, req, len))
    if (checks === undefined) return
    const ms = Number(process.env.BENCH_CHECK_MS ?? 1000)
    for (const s of servers) checks.set(s.name, (await ask<{ check: number }>(s.child, { cmd: 'check', headers: req.headers, ms })).check)
  } finally {
    await Promise.all(servers.map(stopServer))
  }
}

function printPeers (rounds: number, rows: Array<{ name: PeerName; rps: number; cpuUs: number; p99: number; check?: number }>): void {
  const bare = rows[0]!
  console.log(`\n## peers: one GET route behind each session check (median of ${rounds} alternating rounds, a process per server)`)
  console.log(`${'peer'.padEnd(42)} ${'req/s'.padStart(8)} ${'ratio'.padStart(7)} ${'CPU µs/req'.padStart(11)} ${'p99 ms'.padStart(7)} ${'check µs/call'.padStart(14)}`)
  for (const r of rows) {
    const check = r.name === 'bare' || r.check === undefined ? '' : r.check.toFixed(2)
    console.log(`${LABELS[r.name].padEnd(42)} ${Math.round(r.rps).toString().padStart(8)} ${(r.rps / bare.rps).toFixed(2).padStart(6)}x ${r.cpuUs.toFixed(1).padStart(11)} ${r.p99.toFixed(0).padStart(7)} ${check.padStart(14)}`)
  }
  const g = rows.find((r) => r.name === 'gatehouse')!
  console.log(`gatehouse / bare: ${(bare.cpuUs / g.cpuUs).toFixed(3)} in CPU per request (target >= ${BARE_TARGET})`)
  for (const name of ['fastify-jwt', 'fastify-jwt-cached'] as const) {
    const jwt = rows.find((r) => r.name === name)!
    const less = jwt.cpuUs / g.cpuUs
    console.log(`gatehouse vs ${LABELS[name]}: ${less.toFixed(2)}x less CPU per request (target >= ${JWT_TARGET.toFixed(2)}x ${less >= JWT_TARGET ? 'ok' : 'BELOW'}), ${(g.rps / jwt.rps).toFixed(2)}x req/s`)
  }
  const others = rows.filter((r) => r.name !== 'bare' && r.name !== 'gatehouse')
  const behind = others.filter((r) => r.rps >= g.rps || r.cpuUs <= g.cpuUs).map((r) => LABELS[r.name])
  console.log(`gatehouse ahead of every other peer in req/s and CPU per request: ${behind.length === 0 ? 'ok' : `BELOW (${behind.join(', ')})`}`)
}

export async function benchPeers (): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  const len = lengths({ warmup: 1, seconds: 5 })
  const runs = new Map<PeerName, Run[]>(PEER_NAMES.map((n) => [n, []]))
  const checks = new Map<PeerName, number>()
  for (let r = 0; r < rounds; r++) await round(PEER_NAMES, runs, r === rounds - 1 ? checks : undefined, len)
  printPeers(rounds, PEER_NAMES.map((name) => {
    const rs = runs.get(name)!
    const row = { name, rps: median(rs.map((x) => x.rps)), cpuUs: median(rs.map((x) => x.cpuUs)), p99: median(rs.map((x) => x.p99)) }
    const check = checks.get(name)
    return check === undefined ? row : { ...row, check }
  }))
}
