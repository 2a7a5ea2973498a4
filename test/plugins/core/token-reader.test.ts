/**
 * The token reader: the app's extractor, query, header, bearer, then the session cookie (the first one present,
 * empty values skipped); `tokenSources` renames the query and header, turns sources on or off. Unit tests on request-shaped objects, plus the hot
 * path's promise: a cached session comes back without one.
 */
import t from 'tap'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { FROM_BEARER, FROM_COOKIE, FROM_EXTRACTOR, FROM_HEADER, FROM_QUERY, TokenReader } from '../../../plugins/core/sessions/token-reader.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'
import { sessionApp, tokenOf } from '../../helpers/session-app.js'

const request = (query: unknown, headers: Record<string, string>, cookies: Record<string, string>): FastifyRequest =>
  ({ query, headers, cookies }) as unknown as FastifyRequest

const defaults = { tokenSources: { query: 'token', header: 'x-jwt', bearer: true, extract: null }, cookies: { sessionName: 'JWT' } } as const

t.test('query, then header, then cookie; empty values are skipped; none gives undefined', async (t) => {
  const r = new TokenReader(defaults as never)
  t.same(r.read(request({ token: 'q' }, { 'x-jwt': 'h' }, { JWT: 'c' })), { token: 'q', source: FROM_QUERY })
  t.same(r.read(request({ token: '' }, { 'x-jwt': 'h' }, { JWT: 'c' })), { token: 'h', source: FROM_HEADER })
  t.same(r.read(request({}, { 'x-jwt': '' }, { JWT: 'c' })), { token: 'c', source: FROM_COOKIE })
  t.equal(r.read(request(null, {}, { JWT: '' })), undefined)
  t.equal(r.read(request({ token: ['a', 'b'] }, {}, {})), undefined, 'a repeated query parameter is not a token')
  t.same(r.read(request({}, { authorization: 'Bearer b.c-d_e~f+g/h==' }, { JWT: 'c' })), { token: 'b.c-d_e~f+g/h==', source: FROM_BEARER })
  t.same(r.read(request({}, { authorization: 'bEaReR abc', 'x-jwt': 'h' }, {})), { token: 'h', source: FROM_HEADER }, 'X-JWT before bearer')
  for (const value of ['Basic YTpi', 'Bearer', 'Bearer ', 'Bearer a b', 'Bearer  abc', 'Bearer a"b', `Bearer ${'a'.repeat(16_400)}`]) {
    t.same(r.read(request({}, { authorization: value }, { JWT: 'c' })), { token: 'c', source: FROM_COOKIE }, `not a bearer token: ${value.slice(0, 20)}`)
  }
})

t.test('the app\'s extractor is tried first; an empty or non-string answer means none', async (t) => {
  const answers: unknown[] = ['x', '', undefined, null, 42]
  const r = new TokenReader({ tokenSources: { ...defaults.tokenSources, query: null, extract: () => answers.shift() }, cookies: { sessionName: 'JWT' } } as never)
  const req = request({}, { 'x-jwt': 'h' }, {})
  t.same(r.read(req), { token: 'x', source: FROM_EXTRACTOR })
  for (let i = 0; i < 4; i++) t.same(r.read(req), { token: 'h', source: FROM_HEADER })
})

t.test('sources turned off are not read at all', async (t) => {
  const r = new TokenReader({ tokenSources: { query: null, header: null, bearer: false, extract: null }, cookies: { sessionName: 'SID' } } as never)
  t.equal(r.read(request({ token: 'q' }, { 'x-jwt': 'h', authorization: 'Bearer b' }, {})), undefined)
  t.same(r.read(request({ token: 'q' }, { 'x-jwt': 'h' }, { SID: 'c' })), { token: 'c', source: FROM_COOKIE })
})

t.test('a cached session is answered synchronously (no promise); a first-seen token takes the one asynchronous verification', async (t) => {
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
  t.same(seen.slice(3), ['promise', 'session'], 'first sight verified asynchronously, then served from the cache without a promise')
})

t.test('requests served at once keep their own token source: a cookie session without the XSRF header is refused beside query sessions', async (t) => {
  const s = await sessionApp({ tokenSources: { query: true } }, (app) => {
    app.get('/who', { preHandler: app.auth.authenticate }, async (request) => ({ user: request.user!.name }))
  })
  t.teardown(s.close)
  const token = tokenOf(await s.login('ann'))
  const answers = await Promise.all(Array.from({ length: 40 }, async (_, i) => i % 2 === 0
    ? await s.app.inject({ url: `/who?token=${token}` })
    : await s.app.inject({ url: '/who', cookies: { JWT: token } })))
  t.same(answers.map((r) => r.statusCode), answers.map((_, i) => i % 2 === 0 ? 200 : 401), 'query: 200; cookie without its XSRF header: 401')
})
