/**
 * `npm run bench -- bearer`: does a Bearer request cost the same as a cookie request (issue 34)? One server app
 * (`authenticate` as the route's onRequest hook, bench/ladder-apps.ts), one session token, sent two ways: as the
 * cookie pair with its XSRF header, and as `Authorization: Bearer` padded with a harmless header to the same
 * number of request bytes (so that neither side parses more bytes). A fresh server process per case per round,
 * rounds alternating (cookie, Bearer, cookie, …; default BENCH_ROUNDS 7, 1 s of warm-up then 3 s of load),
 * medians of the server processes' CPU µs per request. Printed: the table (cookie first), the ratio Bearer /
 * cookie of the medians, judged against the target (<= 1.05), and the ratio of each round's pair beside it.
 */
import { ladderSession } from './ladder-apps.js'
import { median, type BenchRequest } from './lib.js'
import { headerBytes, padTo, sameBytes } from './same-bytes.js'
import { alternateProcesses, lengths, loadAverage, printCpuTable } from './server-process.js'

/** The most Bearer may cost, as its CPU per request over the cookie's. */
export const BEARER_TARGET = 1.05

/**
 * The cookie request and the Bearer request of one session, and a request without credentials, padded to the same
 * header bytes (the longest one's).
 */
export async function sameBytesPair (): Promise<{ cookie: BenchRequest; bearer: BenchRequest; anonymous: BenchRequest }> {
  const [cookie, bearer] = sameBytes(await ladderSession(), await ladderSession(true))
  return { cookie, bearer, anonymous: padTo({ path: cookie.path, headers: {} }, headerBytes(cookie)) }
}

export async function benchBearer (): Promise<void> {
  const { cookie, bearer } = await sameBytesPair()
  const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
  const loadAtStart = loadAverage()
  const [c, b] = await alternateProcesses([
    { label: 'authenticate, cookie pair + XSRF header', app: 'ladder-auth-onrequest', req: cookie },
    { label: 'authenticate, the same token as Bearer', app: 'ladder-auth-onrequest', req: bearer }
  ], lengths({ warmup: 1, seconds: 3 }), rounds)
  printCpuTable(`Bearer against cookie: one route with authenticate as onRequest, ${headerBytes(cookie)} header bytes each (median of ${rounds} alternating rounds, a process per server per round)`, [c!, b!], loadAtStart)
  const ratio = b!.cpuUs / c!.cpuUs
  const pairs = b!.cpuRuns.map((us, i) => us / c!.cpuRuns[i]!)
  console.log(`Bearer / cookie, CPU µs per request: ${ratio.toFixed(3)} (target <= ${BEARER_TARGET.toFixed(2)}: ${ratio <= BEARER_TARGET ? 'PASS' : 'FAIL'})`)
  console.log(`  per round (Bearer process / the cookie process before it): ${pairs.map((p) => p.toFixed(3)).join(', ')}; median ${median(pairs).toFixed(3)}`)
}
