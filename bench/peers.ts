/**
 * The peer table, `npm run bench -- peers`: the same GET route behind each library's session check (the peers
 * of bench/peer-apps.ts), every server in a process of its own (bench/peer-server.ts) and autocannon in another,
 * in alternating rounds, a fresh process per server per round, medians across them. Every server receives the
 * same request bytes: one Cookie header holding every peer's session cookie, and gatehouse's XSRF header. Printed
 * per peer, CPU first: the server's CPU µs per request (its process's CPU time over the round's requests: on a
 * shared machine req/s follows what else runs, CPU per request much less), the bare route's over it, the lowest
 * and highest process, then req/s and its ratio, p99 latency, and the session check alone called in process (µs
 * per call); the load average at the start and the end.
 * Targets (issue 39, on CPU per request): gatehouse >= 0.95x the bare route, >= 2x less than @fastify/jwt with its
 * verify cache, and less than every other peer.
 * BENCH_ROUNDS (default 5), BENCH_SECONDS (default 5), BENCH_WARMUP (default 1), BENCH_CHECK_MS (default 1000)
 * set the lengths: about 6 minutes at the defaults.
 */
import { median, type BenchRequest } from './lib.js'
import { PEER_NAMES, type PeerName } from './peer-apps.js'
import { ask, lengths, loadAverage, loadServer, startServer, stopServer, type LoadLengths, type ServerProcess, type ServerRun } from './server-process.js'

const BARE_TARGET = 0.95
const JWT_CACHE_TARGET = 2

const LABELS: Record<PeerName, string> = {
  bare: 'bare route (same request bytes)',
  gatehouse: 'gatehouse authenticate',
  'fastify-jwt-cache': '@fastify/jwt jwtVerify, verify cache on',
  'fastify-jwt': '@fastify/jwt jwtVerify, no cache',
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

interface PeerRow { name: PeerName; rps: number; cpuUs: number; cpuRuns: number[]; p99: number; check?: number }

function printPeers (rounds: number, rows: PeerRow[], loadAtStart: string): void {
  const bare = rows[0]!
  console.log(`\n## peers: one GET route behind each session check (median of ${rounds} alternating rounds, a process per server per round)`)
  console.log(`load average (1 / 5 / 15 min): ${loadAtStart} at the start, ${loadAverage()} at the end`)
  console.log(`${'peer'.padEnd(42)} ${'CPU µs/req'.padStart(10)} ${'ratio'.padStart(7)} ${'min-max µs'.padStart(12)} ${'req/s'.padStart(8)} ${'ratio'.padStart(7)} ${'p99 ms'.padStart(6)} ${'check µs/call'.padStart(14)}`)
  for (const r of rows) {
    const check = r.name === 'bare' || r.check === undefined ? '' : r.check.toFixed(2)
    const spread = `${Math.min(...r.cpuRuns).toFixed(1)}-${Math.max(...r.cpuRuns).toFixed(1)}`
    console.log(`${LABELS[r.name].padEnd(42)} ${r.cpuUs.toFixed(2).padStart(10)} ${(bare.cpuUs / r.cpuUs).toFixed(3).padStart(6)}x ${spread.padStart(12)} ${Math.round(r.rps).toString().padStart(8)} ${(r.rps / bare.rps).toFixed(2).padStart(6)}x ${r.p99.toFixed(0).padStart(6)} ${check.padStart(14)}`)
  }
  const g = rows.find((r) => r.name === 'gatehouse')!
  const jwt = rows.find((r) => r.name === 'fastify-jwt-cache')!
  const verdict = (ok: boolean): string => ok ? 'ok' : 'BELOW'
  const vsBare = bare.cpuUs / g.cpuUs
  const vsJwt = jwt.cpuUs / g.cpuUs
  console.log(`gatehouse / bare route, CPU: ${vsBare.toFixed(3)}x (target >= ${BARE_TARGET.toFixed(2)}x ${verdict(vsBare >= BARE_TARGET)})`)
  console.log(`gatehouse against @fastify/jwt with its cache: ${vsJwt.toFixed(2)}x less CPU per request (target >= ${JWT_CACHE_TARGET.toFixed(2)}x ${verdict(vsJwt >= JWT_CACHE_TARGET)}), ${(g.rps / jwt.rps).toFixed(2)}x its req/s`)
  const others = rows.filter((r) => r.name !== 'bare' && r.name !== 'gatehouse')
  const behind = others.filter((r) => r.cpuUs <= g.cpuUs).map((r) => LABELS[r.name])
  console.log(`gatehouse uses less CPU per request than every other peer: ${behind.length === 0 ? 'ok' : `BELOW (${behind.join(', ')})`}`)
}

export async function benchPeers (): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  const len = lengths({ warmup: 1, seconds: 5 })
  const runs = new Map<PeerName, Run[]>(PEER_NAMES.map((n) => [n, []]))
  const checks = new Map<PeerName, number>()
  const loadAtStart = loadAverage()
  for (let r = 0; r < rounds; r++) await round(PEER_NAMES, runs, r === rounds - 1 ? checks : undefined, len)
  printPeers(rounds, PEER_NAMES.map((name) => {
    const rs = runs.get(name)!
    const cpuRuns = rs.map((x) => x.cpuUs)
    const row = { name, rps: median(rs.map((x) => x.rps)), cpuUs: median(cpuRuns), cpuRuns, p99: median(rs.map((x) => x.p99)) }
    const check = checks.get(name)
    return check === undefined ? row : { ...row, check }
  }), loadAtStart)
}
