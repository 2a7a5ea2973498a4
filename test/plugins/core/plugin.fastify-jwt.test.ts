/**
 * fastify-gatehouse beside @fastify/jwt on one instance, in both registration orders: with @fastify/jwt's
 * `decoratorName` (as the README shows) each does its job on its own request property; with its default name
 * (`user`) registered first, the core keeps its declaration and each plugin's hooks still work. The core declares
 * `request.user` (null) itself, so @fastify/jwt's default name after it is refused at startup, never at a request.
 */
import t from 'tap'
import jwt from '@fastify/jwt'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import { client, listen } from '../../helpers/client.js'

const SERVICE_SECRET = 'service-secret-service-secret-0123'

async function both (app: FastifyInstance, order: 'auth-first' | 'jwt-first', decoratorName?: string): Promise<void> {
  const gatehouse = async (): Promise<void> => {
    await app.register(authPlugin, {
      secret: () => 'gatehouse-secret-gatehouse-secret-01',
      url: 'http://127.0.0.1',
      providers: [{ kind: 'direct', name: 'local', checker: (u, p) => u === 'alice' && p === 'pw' }]
    })
  }
  const fastifyJwt = async (): Promise<void> => {
    await app.register(jwt, { secret: SERVICE_SECRET, ...(decoratorName === undefined ? {} : { decoratorName }) })
  }
  if (order === 'auth-first') { await gatehouse(); await fastifyJwt() } else { await fastifyJwt(); await gatehouse() }
  app.get('/api/me', { preHandler: app.auth.authenticate }, async (request) => ({ name: request.user?.name }))
  app.get('/service', async (request) => {
    const payload = await request.jwtVerify<{ sub: string }>()
    const user = (request as unknown as Record<string, { sub?: string }>)[decoratorName ?? 'user']
    return { sub: payload.sub, decorated: user?.sub }
  })
}

for (const order of ['auth-first', 'jwt-first'] as const) {
  for (const decoratorName of ['jwtUser', undefined]) {
    if (order === 'auth-first' && decoratorName === undefined) continue
    t.test(`${order}, @fastify/jwt decoratorName ${decoratorName ?? '(default "user")'}`, async (t) => {
      const { app, base } = await listen((a) => both(a, order, decoratorName))
      t.teardown(() => app.close())
      const c = client(base)
      // gatehouse: a cookie session through the direct provider and the authenticate hook.
      t.equal((await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'pw' } })).status, 200)
      const me = await c.fetch('/api/me', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! } })
      t.equal(me.status, 200)
      t.same(await me.json(), { name: 'alice' })
      t.equal((await client(base).fetch('/api/me')).status, 401, 'gatehouse still refuses a request without a session')
      // @fastify/jwt: a bearer token of another service, verified by jwtVerify and placed on its decorator.
      const token = app.jwt.sign({ sub: 'svc-1' })
      const svc = await fetch(`${base}/service`, { headers: { authorization: `Bearer ${token}` } })
      t.equal(svc.status, 200)
      t.same(await svc.json(), { sub: 'svc-1', decorated: 'svc-1' })
      t.equal((await fetch(`${base}/service`)).status, 401, '@fastify/jwt still refuses a request without a token')
    })
  }
}

t.test('auth-first, @fastify/jwt decoratorName (default "user"): startup fails naming the decorator, nothing is served', async (t) => {
  const loader = process.execArgv.filter((a) => a.includes('ts-loader'))
  const child = spawnSync(process.execPath, [...loader, fileURLToPath(new URL('./plugin.fastify-jwt.child.ts', import.meta.url))], { encoding: 'utf8', timeout: 60_000 })
  t.equal(child.status, 3, child.stderr)
  t.match(child.stdout, /^startup failed: FST_ERR_DEC_ALREADY_PRESENT: The decorator 'user' has already been added/)
})

t.test('request.user is declared by the core: null on a route without an auth hook, the user with one', async (t) => {
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, {
      secret: () => 'gatehouse-secret-gatehouse-secret-01',
      url: 'http://127.0.0.1',
      providers: [{ kind: 'direct', name: 'local', checker: () => true }]
    })
    a.get('/open', async (request) => ({ has: 'user' in request, user: request.user, getUser: a.auth.getUser(request) }))
    a.get('/traced', { preHandler: a.auth.trace }, async (request) => ({ user: request.user?.name ?? null }))
  })
  t.teardown(() => app.close())
  const c = client(base)
  await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'x' } })
  t.same(await (await c.fetch('/open')).json(), { has: true, user: null, getUser: null }, 'no hook: null, not undefined, even with a session')
  t.same(await (await c.fetch('/traced', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! } })).json(), { user: 'alice' })
})
