/**
 * Child of session-cache.test.ts (run without the test runner's coverage, which would make it take minutes):
 * sends one million distinct garbage tokens through the token service and prints what is left behind as JSON.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { sessionApp } from '../../helpers/session-app.js'

const COUNT = 1_000_000
const gc = (globalThis as { gc?: () => void }).gc!
const s = await sessionApp({ secret: (aud) => `secret-of-${aud}-0123456789abcdef0123456789` })
const reply = { setCookie () { return this }, header () { return this } } as unknown as FastifyReply
const head = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: 'default' })).toString('base64url')
let accepted = 0
let otherErrors = 0
gc()
const before = process.memoryUsage().heapUsed
const started = Date.now()
for (let i = 0; i < COUNT; i++) {
  // One in 25 well formed, with a fresh audience each time: verified (and refused), so the secret reader and the
  // key rings see attacker-chosen audiences too.
  const token = i % 25 === 0
    ? `${head}.${Buffer.from(JSON.stringify({ aud: [`site-${i}`], jti: String(i) })).toString('base64url')}.${Buffer.alloc(32, i % 251).toString('base64url')}`
    : `garbage.${i}.token`
  const req = { method: 'GET', headers: { 'x-jwt': token }, query: {}, cookies: {} } as unknown as FastifyRequest
  try {
    await s.tokens.read(req, reply)
    accepted++
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 401) otherErrors++
  }
}
const ms = Date.now() - started
gc()
const grownMB = (process.memoryUsage().heapUsed - before) / 1024 / 1024
console.log(JSON.stringify({ accepted, otherErrors, cacheSize: s.tokens.cache.size, grownMB, ms }))
await s.close()
