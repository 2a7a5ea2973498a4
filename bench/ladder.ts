/**
 * The hook ladder, `npm run bench -- ladder`: where the server CPU of an authenticated request goes, rung by rung
 * (bench/ladder-apps.ts): a bare route; an empty async and an empty callback-style `onRequest`; an empty `onSend`
 * hook; the root plugin's request and reply decorators alone; @fastify/cookie's `onSend` hook and decorators
 * alone; the root plugin registered with a route that uses none of its hooks; `authenticate` as onRequest, as
 * preHandler, and as a callback-style onRequest that calls `done()` synchronously on a cached session (a wrapper
 * of the bench). Every rung receives the same request bytes (a session's cookie pair and XSRF header; the Bearer
 * rung the same token as `Authorization: Bearer`, padded to the same bytes: bench/bearer.ts, whose own suite
 * `npm run bench -- bearer` judges Bearer against cookie), each server in a process of its own, a fresh one per
 * round, rounds alternating (default BENCH_ROUNDS 5, 1 s of warm-up then 3 s of load: about 4 minutes), medians across processes; CPU first.
 * Targets (issue 39): the root plugin costs a route that does not use it nothing (>= 0.98x of bare in CPU);
 * `authenticate` >= 0.95x. `npm run bench -- ladder:ir` counts instructions per request under callgrind instead.
 */
import { sameBytesPair } from './bearer.js'
import { printProcessTable } from './process-table.js'
import { lengths } from './server-process.js'

export async function benchLadder (): Promise<void> {
  const { cookie: req, bearer } = await sameBytesPair()
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  await printProcessTable('hook ladder: one GET route, same request bytes (session cookie pair + XSRF header)', { label: 'bare route', app: 'ladder-bare', req }, [
    { label: 'empty async onRequest', app: 'ladder-async-hook', req },
    { label: 'empty callback onRequest', app: 'ladder-callback-hook', req },
    { label: 'an empty callback onSend hook', app: 'ladder-empty-onsend', req },
    { label: 'request and reply decorators of the root plugin', app: 'ladder-decorators', req },
    { label: '@fastify/cookie, hook: false (its onSend hook)', app: 'ladder-cookie-onsend', req },
    { label: 'root plugin registered, route without a hook', app: 'ladder-root', req, target: 0.98 },
    { label: 'authenticate as onRequest', app: 'ladder-auth-onrequest', req, target: 0.95 },
    { label: 'authenticate as onRequest, the token as Bearer (padded)', app: 'ladder-auth-onrequest', req: bearer, target: 0.95 },
    { label: 'authenticate as preHandler', app: 'ladder-auth-prehandler', req, target: 0.95 },
    { label: 'authenticate as callback onRequest (bench wrapper)', app: 'ladder-auth-callback', req, target: 0.95 }
  ], lengths({ warmup: 1, seconds: 3 }), rounds)
}
