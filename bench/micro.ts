/**
 * `npm run bench:micro`: the session hot path in process, with mitata. One `fastify.auth.authenticate` call on a
 * request object shaped as Fastify's (headers, parsed cookies, query) after the app is ready, for:
 * - a cookie session served from the verified-session cache, with revocation on (the default) and off;
 * - a token seen for the first time (verified, revocation looked up in the in-memory state store, cached);
 * - an expired cookie session that is refreshed on every call;
 * and fast-jwt's HS256 verify with and without its cache on the same token, for reference; then the cached and
 * the refreshed session again with an OpenTelemetry SDK and a `gatehouse:audit` subscriber (micro-otel.ts).
 * Targets: cached session <= 1.5 µs median; first-seen <= fast-jwt's uncached verify (issue 28); revocation on
 * within 0.5 µs of off.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { createVerifier } from 'fast-jwt'
import { bench, do_not_optimize, run } from 'mitata'
import { authPlugin } from '../auth.js'
import { IDLE_REPLY } from './lib.js'
import type { CoreOptions } from '../plugins/core/options.js'
import { benchWithSdk } from './micro-otel.js'

const SECRET = 'bench-micro-secret-0123456789abcdef-0123456789'
const USER = { name: 'bench', id: 'local_0123456789abcdef0123456789abcdef01234567', picture: 'http://127.0.0.1/avatar/0123456789abcdef0123456789abcdef01234567.image' }
const FIRST_SEEN_TOKENS = 30_000

async function app (opts: Partial<CoreOptions> = {}): Promise<FastifyInstance> {
  const a = Fastify()
  await a.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', ...opts })
  await a.ready()
  return a
}

/** What the hook reads of a Fastify request: method, headers, parsed cookies, parsed query. */
function cookieRequest (token: string, jti: string): FastifyRequest {
  return { method: 'GET', headers: { 'x-xsrf-token': jti }, cookies: { JWT: token, 'XSRF-TOKEN': jti }, query: {} } as unknown as FastifyRequest
}

const reply = IDLE_REPLY

async function check (label: string, hook: FastifyInstance['auth']['authenticate'], req: FastifyRequest): Promise<void> {
  await hook.call(undefined as never, req, reply)
  if ((req as { user?: unknown }).user == null) throw new Error(`${label}: the request was not authenticated`)
}

const withRevocation = await app()
const withoutRevocation = await app({ revocation: false })
const firstSeen = await app()
const refreshing = await app()

const session = await withRevocation.auth.tokens.create({ user: USER })
const cachedReq = cookieRequest(session.token, session.claims.jti)
const session2 = await withoutRevocation.auth.tokens.create({ user: USER })
const cachedReqOff = cookieRequest(session2.token, session2.claims.jti)

// More distinct tokens than the cache holds, taken in turn: each call meets a token the cache no longer has.
const fresh: FastifyRequest[] = []
for (let i = 0; i < FIRST_SEEN_TOKENS; i++) {
  const s = await firstSeen.auth.tokens.create({ user: { ...USER, id: `local_${i}` } })
  fresh.push(cookieRequest(s.token, s.claims.jti))
}

// A session whose token expired 20 minutes ago (session.tokenDuration 15 min): every call refreshes it.
const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() - 20 * 60_000 })
const old = await refreshing.auth.tokens.create({ user: USER })
clock.uninstall()
const refreshReq = cookieRequest(old.token, old.claims.jti)

const fjCached = createVerifier({ key: SECRET, algorithms: ['HS256'], cache: 1000 })
const fjUncached = createVerifier({ key: SECRET, algorithms: ['HS256'] })

await check('cached', withRevocation.auth.authenticate, cachedReq)
await check('cached, revocation off', withoutRevocation.auth.authenticate, cachedReqOff)
await check('first seen', firstSeen.auth.authenticate, fresh[0]!)
await check('refresh', refreshing.auth.authenticate, refreshReq)

const auth1 = withRevocation.auth.authenticate
const auth2 = withoutRevocation.auth.authenticate
const auth3 = firstSeen.auth.authenticate
const auth4 = refreshing.auth.authenticate
let next = 0

const NAMES = {
  cached: 'authenticate: cached cookie session',
  cachedOff: 'authenticate: cached, revocation off',
  first: 'authenticate: first-seen token',
  refresh: 'authenticate: refresh every call',
  fjCached: 'fast-jwt verify, cached',
  fjUncached: 'fast-jwt verify, uncached'
}
bench(NAMES.cached, async () => { await auth1.call(undefined as never, cachedReq, reply) })
bench(NAMES.cachedOff, async () => { await auth2.call(undefined as never, cachedReqOff, reply) })
bench(NAMES.first, async () => {
  await auth3.call(undefined as never, fresh[next]!, reply)
  next = (next + 1) % fresh.length
})
bench(NAMES.refresh, async () => { await auth4.call(undefined as never, refreshReq, reply) })
bench(NAMES.fjCached, () => { do_not_optimize(fjCached(session.token)) })
bench(NAMES.fjUncached, () => { do_not_optimize(fjUncached(session.token)) })

const { benchmarks } = await run({ colors: false })
const p50 = (name: string): number => {
  const s = benchmarks.find((b) => b.alias === name)?.runs[0]?.stats
  if (s === undefined) throw new Error(`no result for ${name}`)
  return s.p50 / 1000 // ns → µs
}
const verdict = (ok: boolean): string => ok ? 'ok' : 'MISSED'
const cached = p50(NAMES.cached)
const cachedOff = p50(NAMES.cachedOff)
const first = p50(NAMES.first)
const uncached = p50(NAMES.fjUncached)
console.log(`\n## Session hot path, medians (Node ${process.version})`)
console.log(`cached session          ${cached.toFixed(2)} µs   target <= 1.50 µs                 ${verdict(cached <= 1.5)}`)
console.log(`revocation on - off     ${(cached - cachedOff).toFixed(2)} µs   target <= 0.50 µs                 ${verdict(cached - cachedOff <= 0.5)}`)
console.log(`first-seen token        ${first.toFixed(2)} µs   target <= fast-jwt uncached = ${uncached.toFixed(2)} µs   ${verdict(first <= uncached)}`)
console.log(`refresh every call      ${p50(NAMES.refresh).toFixed(2)} µs`)
for (const a of [withRevocation, withoutRevocation, firstSeen, refreshing]) await a.close()

// The same cases again with an OpenTelemetry SDK and an audit subscriber (built after this half ran without).
await benchWithSdk({ app, request: cookieRequest, reply, user: USER, baseline: { cached, refresh: p50(NAMES.refresh) } })
