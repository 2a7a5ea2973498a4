/**
 * The examples of docs/reference/fastify-auth.md, docs/guide/testing.md and the guides' `onRequest` lines,
 * compiled (lines as written there; test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify, { type FastifyError, type FastifyPluginAsync, type RouteHandlerMethod } from 'fastify'
import authPlugin, { HttpError, type GatehouseAuth } from '../../index.js'
import { signIn } from '../../testing.js'
import assert from 'node:assert/strict'

declare const secret: () => string
declare const url: string
declare const noteSchema: object
declare const escapeHtml: (text: string) => string // the app's own HTML escaping
declare const reports: RouteHandlerMethod
declare const adminPage: RouteHandlerMethod
declare const changePassword: RouteHandlerMethod
// @fastify/auth's own types declare `fastify.auth` too (see the page): only its plugin is needed here.
declare const fastifyAuth: FastifyPluginAsync

const app = Fastify()
await app.register(authPlugin, { secret, url })

app.post('/notes', { onRequest: app.auth.authenticate, schema: { body: noteSchema } }, async (request) => {
  const user = app.auth.mustGetUser(request) // ReadonlyUser: no `!`, no null check
  return { by: user.name }
})

app.setErrorHandler((err: FastifyError, request, reply) => {
  if (err instanceof HttpError) return reply.code(err.statusCode).send({ problem: err.code, detail: err.details })
  request.log.error(err)
  return reply.code(500).send({ problem: 'internal' })
})

// The guides' routes with their guards as onRequest hooks.
app.get('/', { onRequest: app.auth.optionalUser }, async (req) => (req.user ? `hello ${req.user.name}` : 'hello, guest'))
app.get('/api/reports', { onRequest: app.auth.rbac(['editor', 'admin']) }, reports)   // 401 signed out, 403 other roles
app.get('/api/admin', { onRequest: app.auth.admin }, adminPage)                        // 403 unless attrs.admin is true
app.post('/account/password', { onRequest: app.auth.stepUp({ within: '5m' }) }, changePassword)

// decoratorName
{
  const app = Fastify()
  await app.register(authPlugin, { secret, url, decoratorName: 'gatehouse' })
  await app.register(fastifyAuth) // @fastify/auth: fastify.auth is its own now
  app.get('/reports', { onRequest: app.gatehouse.authenticate }, reports)
}
declare module 'fastify' {
  interface FastifyInstance {
    gatehouse: GatehouseAuth
  }
}
// docs/guide/security.md: server-rendered pages
{
  const app = Fastify()
  await app.register(authPlugin, { secret, url, xsrf: { navigation: true } })
  app.get('/dashboard', { onRequest: app.auth.optionalUser }, async (request, reply) => {
    const user = app.auth.getUser(request) // the signed-in user on a link or a reload, null for a guest
    return reply.type('text/html').send(user === null ? '<a href="/login">Sign in</a>' : `Hello ${escapeHtml(user.name)}`)
  })
}
// docs/guide/testing.md
{
  const app = Fastify()
  await app.register(authPlugin, { secret, url })
  app.post('/notes', { onRequest: app.auth.authenticate }, async (request) => ({ by: app.auth.mustGetUser(request).name }))

  const { cookies, headers } = await signIn(app, { id: 'local_1', name: 'ann', role: 'editor' })
  const ok = await app.inject({ method: 'POST', url: '/notes', cookies, headers, payload: { text: 'hi' } })
  assert.equal(ok.statusCode, 200)
  const refused = await app.inject({ method: 'POST', url: '/notes', payload: { text: 'hi' } })
  assert.equal(refused.statusCode, 401)
}
