/**
 * The token reader: query, then header, then the session cookie (the first one present, empty values skipped);
 * `tokenSources` renames the first two or turns them off. Unit tests on request-shaped objects, plus the hot
 * path's promise: a cached session comes back without one.
 */
import t from 'tap'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { FROM_COOKIE, FROM_HEADER, FROM_QUERY, TokenReader } from '../../../plugins/core/token-reader.js'
import { coreOf } from '../../../plugins/core/internals.js'
import { sessionApp } from '../../helpers/session-app.js'

const request = (query: unknown, headers: Record<string, string>, cookies: Record<string, string>): FastifyRequest =>
  ({ query, headers, cookies }) as unknown as FastifyRequest

const defaults = { tokenSources: { query: 'token', header: 'x-jwt' }, cookies: { sessionName: 'JWT' } } as const

t.test('query, then header, then cookie; empty values are skipped; none gives undefined', async (t) => {
  const r = new TokenReader(defaults as never)
  t.equal(r.read(request({ token: 'q' }, { 'x-jwt': 'h' }, { JWT: 'c' })), 'q')
  t.equal(r.source, FROM_QUERY)
  t.equal(r.read(request({ token: '' }, { 'x-jwt': 'h' }, { JWT: 'c' })), 'h')
  t.equal(r.source, FROM_HEADER)
  t.equal(r.read(request({}, { 'x-jwt': '' }, { JWT: 'c' })), 'c')
  t.equal(r.source, FROM_COOKIE)
  t.equal(r.read(request(null, {}, { JWT: '' })), undefined)
  t.equal(r.read(request({ token: ['a', 'b'] }, {}, {})), undefined, 'a repeated query parameter is not a token')
})

t.test('sources turned off are not read at all', async (t) => {
  const r = new TokenReader({ tokenSources: { query: null, header: null }, cookies: { sessionName: 'SID' } } as never)
  t.equal(r.read(request({ token: 'q' }, { 'x-jwt': 'h' }, {})), undefined)
  t.equal(r.read(request({ token: 'q' }, { 'x-jwt': 'h' }, { SID: 'c' })), 'c')
  t.equal(r.source, FROM_COOKIE)
})

t.test('a session is answered synchronously (no promise) from the cache, and on first sight with a synchronous secret and the memory store', async (t) => {
  const seen: string[] = []
  const s = await sessionApp({}, (app) => {
    app.get('/sync', async (request, reply) => {
      const answer = coreOf(app).tokens.session(request, reply)
      seen.push(answer instanceof Promise ? 'promise' : 'session')
      return { user: (await answer)?.user?.name ?? null }
    })
  })
  t.teardown(s.close)
  const c = await s.login('ann')
  for (let i = 0; i < 3; i++) t.same(await (await s.get(c, '/sync')).json(), { user: 'ann' })
  t.same(seen, ['session', 'session', 'session'], 'the login put the session in the cache')
  s.tokens.cache.clear()
  t.equal(s.tokens.cache.size, 0)
  await s.get(c, '/sync')
  t.equal(s.tokens.cache.size, 1, 'verified on first sight and cached')
  await s.get(c, '/sync')
  t.same(seen.slice(3), ['session', 'session'], 'first sight without a promise (issue 28), then served from the cache')
})
