/**
 * The hook ladder, `npm run bench -- ladder`: where the server CPU of an authenticated request goes, rung by rung
 * (bench/ladder-apps.ts): a bare route; an empty async and an empty callback-style `onRequest`; an empty `onSend`
 * hook; the root plugin's request and reply decorators alone; @fastify/cookie's `onSend` hook and decorators
 * alone; the root plugin registered with a route that uses none of its hooks; `authenticate` as onRequest, as
 * preHandler, and as a callback-style onRequest that calls `done()` synchronously on a cached session (a wrapper
 * of the bench); `admin`, `rbac` and `trace` (on a request without credentials) as onRequest; @fastify/jwt with
 * its verify cache. Every rung receives the same request bytes (a session's cookie pair and XSRF header; the
 * Bearer rung the same token as `Authorization: Bearer`, the anonymous one no credentials, each padded to the same
 * bytes: bench/bearer.ts, whose own suite `npm run bench -- bearer` judges Bearer against cookie), each server in
 * a process of its own, a fresh one per round, rounds alternating (default BENCH_ROUNDS 5, 1 s of warm-up then
 * 3 s of load: about 5 minutes), medians across processes; CPU first.
 * Targets (issue 39): the root plugin costs a route that does not use it nothing (>= 0.98x of bare in CPU);
 * `authenticate` >= 0.95x.
 *
 * `npm run bench -- ladder:ir` counts instructions per request under callgrind instead (bench/callgrind.ts), for
 * the rungs of issue 46 (`IR_RUNGS`: bare, empty hook, cookie, Bearer, admin, rbac, trace, @fastify/jwt with its
 * cache, and the bare route given the Bearer request and the request without credentials), and judges its
 * targets: cookie and Bearer <= 1.05x the bare route given the same request, admin and rbac <= 0.01x more than
 * authenticate, trace on an anonymous request <= 1.02x.
 */
import { sameBytesPair } from './bearer.js'
import { printProcessTable } from './process-table.js'
import { lengths, type ProcessCase } from './server-process.js'

/** Labels of the ladder's rungs that the targets name. */
const BARE_BEARER = 'bare route, the Bearer request'
const BARE_ANONYMOUS = 'bare route, the request without credentials'
const COOKIE = 'authenticate as onRequest'
const BEARER = 'authenticate as onRequest, the token as Bearer (padded)'
const ADMIN = 'admin as onRequest'
const RBAC = 'rbac as onRequest'
const TRACE = 'trace as onRequest, no credentials (padded)'
/** The rungs `ladder:ir` counts (each takes minutes under valgrind). */
const IR_RUNGS = new Set([BARE_BEARER, BARE_ANONYMOUS, 'empty callback onRequest', COOKIE, BEARER, ADMIN, RBAC, TRACE, '@fastify/jwt, verify cache, jwtVerify as onRequest'])

export async function benchLadder (): Promise<void> {
  const { cookie: req, bearer, anonymous } = await sameBytesPair()
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  const rungs: ProcessCase[] = [
    // The same bytes, other headers: Node parses and keeps them at another cost, so each request is judged
    // against the bare route given that very request.
    { label: BARE_BEARER, app: 'ladder-bare', req: bearer },
    { label: BARE_ANONYMOUS, app: 'ladder-bare', req: anonymous },
    { label: 'empty async onRequest', app: 'ladder-async-hook', req },
    { label: 'empty callback onRequest', app: 'ladder-callback-hook', req },
    { label: 'an empty callback onSend hook', app: 'ladder-empty-onsend', req },
    { label: 'request and reply decorators of the root plugin', app: 'ladder-decorators', req },
    { label: '@fastify/cookie, hook: false (its onSend hook)', app: 'ladder-cookie-onsend', req },
    { label: 'root plugin registered, route without a hook', app: 'ladder-root', req, target: 0.98 },
    { label: COOKIE, app: 'ladder-auth-onrequest', req, target: 0.95 },
    { label: BEARER, app: 'ladder-auth-onrequest', req: bearer, target: 0.95 },
    { label: 'authenticate as preHandler', app: 'ladder-auth-prehandler', req, target: 0.95 },
    { label: 'authenticate as callback onRequest (bench wrapper)', app: 'ladder-auth-callback', req, target: 0.95 },
    { label: ADMIN, app: 'ladder-admin', req },
    { label: RBAC, app: 'ladder-rbac', req },
    { label: TRACE, app: 'ladder-trace', req: anonymous },
    { label: '@fastify/jwt, verify cache, jwtVerify as onRequest', app: 'ladder-fastify-jwt-cache', req }
  ]
  const bare: ProcessCase = { label: 'bare route', app: 'ladder-bare', req }
  const title = 'hook ladder: one GET route, same request bytes (session cookie pair + XSRF header)'
  if (process.env.BENCH_MEASURE !== 'callgrind') {
    await printProcessTable(title, bare, rungs, lengths({ warmup: 1, seconds: 3 }), rounds)
    return
  }
  const counts = await printProcessTable(title, bare, rungs.filter((r) => IR_RUNGS.has(r.label)), lengths({ warmup: 1, seconds: 3 }), rounds)
  if (counts !== undefined) judgeIr(counts)
}

/** Issue 46's targets on the counts of one `ladder:ir` run (rungs BENCH_ONLY left out are not judged). */
function judgeIr (counts: ReadonlyArray<{ label: string; main: number }>): void {
  const ir = new Map(counts.map((c) => [c.label, c.main]))
  const bare = counts[0]!.main
  const lines: string[] = []
  const judge = (what: string, value: number, target: number, unit: string): void => {
    lines.push(`${what}: ${value.toFixed(3)}${unit} (target <= ${target.toFixed(2)}${unit}: ${value <= target ? 'PASS' : 'FAIL'})`)
  }
  const cookie = ir.get(COOKIE)
  if (cookie !== undefined) judge('cookie / bare', cookie / bare, 1.05, 'x')
  const bareBearer = ir.get(BARE_BEARER)
  if (ir.has(BEARER) && bareBearer !== undefined) judge('Bearer / bare (the Bearer request)', ir.get(BEARER)! / bareBearer, 1.05, 'x')
  for (const guard of [ADMIN, RBAC]) {
    if (ir.has(guard) && cookie !== undefined) judge(`${guard.split(' ')[0]!} / bare − authenticate / bare`, (ir.get(guard)! - cookie) / bare, 0.01, 'x')
  }
  const bareAnonymous = ir.get(BARE_ANONYMOUS)
  if (ir.has(TRACE) && bareAnonymous !== undefined) judge('trace / bare (the request without credentials)', ir.get(TRACE)! / bareAnonymous, 1.02, 'x')
  if (lines.length > 0) console.log(`\nissue 46's targets, instructions per request:\n  ${lines.join('\n  ')}`)
}
