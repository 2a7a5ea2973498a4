/**
 * `decoratorName` (issue 23 item 1): the app's API under another name, @fastify/auth beside the package, a
 * collision named at startup, and the internals (providers, the kit, the testing helper) independent of the name.
 */
import t from 'tap'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import fastifyAuth from '@fastify/auth'
import { authPlugin } from '../../../auth.js'
import { OptionsError } from '../../../lib/errors.js'
import type { GatehouseApi } from '../../../auth.js'
import { signIn } from '../../../testing.js'

const SECRET = 'decorator-secret-0123456789abcdef-0123456789'
const base = { secret: () => SECRET, url: 'http://127.0.0.1', rateLimit: false as const }
const api = (app: FastifyInstance, name: string): GatehouseApi => (app as unknown as Record<string, GatehouseApi>)[name]!

t.test('decoratorName renames fastify.auth; providers, routes and hooks work under the new name', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { ...base, decoratorName: 'gatehouse', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  const gatehouse = api(app, 'gatehouse')
  t.notOk(app.hasDecorator('auth'), 'no fastify.auth')
  gatehouse.addDirectProvider('other', () => true)
  app.get('/me', { onRequest: gatehouse.authenticate }, async (request) => ({ name: gatehouse.mustGetUser(request).name }))
  await app.ready()
  t.same(gatehouse.providers(), ['local', 'other'], 'the root and the add* methods mount on the renamed core')
  const login = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })
  t.equal(login.statusCode, 200, 'a provider logs in')
  const cookies = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]))
  const me = await app.inject({ method: 'GET', url: '/me', cookies, headers: { 'x-xsrf-token': cookies['XSRF-TOKEN']! } })
  t.same(me.json(), { name: 'ann' })
  const signed = await signIn(app, { id: 'u1', name: 'bob' })
  t.same((await app.inject({ method: 'GET', url: '/me', cookies: { ...signed.cookies }, headers: { ...signed.headers } })).json(), { name: 'bob' })
})

t.test('@fastify/auth registered first: the default name is an OptionsError naming decoratorName', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyAuth)
  const err = await app.register(authPlugin, base).then(() => null, (e: unknown) => e)
  t.type(err, OptionsError)
  t.equal((err as OptionsError).option, 'decoratorName')
  t.match((err as OptionsError).message, /"auth" is already a decorator.*@fastify\/auth/)
})

t.test('a taken name of another kind is refused too, and bad values name the option', async (t) => {
  const taken = Fastify()
  t.teardown(() => taken.close())
  taken.decorate('gatehouse', {})
  const err = await taken.register(authPlugin, { ...base, decoratorName: 'gatehouse' }).then(() => null, (e: unknown) => e)
  t.equal((err as OptionsError).option, 'decoratorName')
  for (const bad of [42, '', 'not a name', '1st', null]) {
    const app = Fastify()
    const e = await app.register(authPlugin, { ...base, decoratorName: bad as unknown as string }).then(() => null, (x: unknown) => x)
    t.equal((e as OptionsError | null)?.option, 'decoratorName', `${JSON.stringify(bad)} is refused naming decoratorName`)
    await app.close()
  }
})

t.test('@fastify/auth and the package side by side, in either order, composing a guard of each', async (t) => {
  const apiKey = async (request: FastifyRequest): Promise<void> => {
    if (request.headers['x-api-key'] !== 'k1') throw Object.assign(new Error('bad key'), { statusCode: 401 })
  }
  for (const order of ['package first', '@fastify/auth first']) {
    const app = Fastify()
    if (order === '@fastify/auth first') await app.register(fastifyAuth)
    await app.register(authPlugin, { ...base, decoratorName: 'gatehouse' })
    if (order === 'package first') await app.register(fastifyAuth)
    // Composition needs the guard to throw (the app's error handler makes it so; see docs/reference/fastify-auth.md).
    app.setErrorHandler((err: Error & { statusCode?: number }, _request, reply: FastifyReply) => reply.code(err.statusCode ?? 500).send({ error: err.message }))
    const gatehouse = api(app, 'gatehouse')
    app.get('/either', { onRequest: app.auth([gatehouse.authenticate, apiKey]) }, async (request) => ({ user: request.user?.name ?? null }))
    const signed = await signIn(app, { id: 'u1', name: 'ann' })
    t.same((await app.inject({ url: '/either', cookies: { ...signed.cookies }, headers: { ...signed.headers } })).json(), { user: 'ann' }, `${order}: the session passes`)
    t.same((await app.inject({ url: '/either', headers: { 'x-api-key': 'k1' } })).json(), { user: null }, `${order}: the API key passes`)
    t.equal((await app.inject({ url: '/either' })).statusCode, 401, `${order}: neither: 401`)
    await app.close()
  }
})

t.test('with @fastify/auth and no error handler of the app\'s, a refused guard answers itself and the handler never runs', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { ...base, decoratorName: 'gatehouse' })
  await app.register(fastifyAuth)
  let ran = 0
  const apiKey = async (request: FastifyRequest): Promise<void> => {
    if (request.headers['x-api-key'] !== 'k1') throw Object.assign(new Error('bad key'), { statusCode: 401 })
  }
  app.post('/either', { onRequest: app.auth([api(app, 'gatehouse').authenticate, apiKey]) }, async () => { ran++; return 'ran' })
  const r = await app.inject({ method: 'POST', url: '/either', headers: { 'x-api-key': 'k1' } })
  t.equal(r.statusCode, 401, 'the guard\'s own 401 (the documented limit: set an error handler to compose with `or`)')
  t.same(r.json(), { error: 'unauthorized', details: 'not logged in', code: 'GATEHOUSE_UNAUTHORIZED' })
  t.equal(ran, 0, 'the handler did not run')
})
