/**
 * Type tests of the guards and the user (issue 23, items 1, 2 and 7), compiled by `npm run typecheck`: every guard
 * fits `onRequest` as well as `preHandler`; the user is read-only, reached without `!` through `mustGetUser`;
 * a renamed decorator (`decoratorName`) is typed by declaring it like the default one.
 */
import Fastify from 'fastify'
import authPlugin, { HttpError, User, type GatehouseAuth, type ReadonlyUser } from '../../index.js'
import { signIn, type SignedIn } from '../../testing.js'

const app = Fastify()
await app.register(authPlugin, { secret: () => 's'.repeat(32), url: 'http://localhost' })
const { auth } = app

const guards = [auth.authenticate, auth.admin, auth.rbac(['editor']), auth.optionalUser, auth.xsrf, auth.stepUp({ within: '5m' }), auth.updateUser((u) => u)]
for (const [i, guard] of guards.entries()) {
  app.get(`/on-request/${i}`, { onRequest: guard }, async () => 'ok')
  app.get(`/pre-handler/${i}`, { preHandler: guard }, async () => 'ok')
}
app.post('/notes', { onRequest: [auth.authenticate, auth.rbac(['editor'])] }, async (request) => {
  const user: ReadonlyUser = auth.mustGetUser(request)
  // @ts-expect-error request.user may be null: mustGetUser is the typed way to the user
  const unchecked: ReadonlyUser = request.user
  void unchecked
  // @ts-expect-error the user is read-only (frozen at runtime)
  user.name = 'mallory'
  // @ts-expect-error its attributes too
  user.attrs!.admin = true
  // @ts-expect-error and it has no setters
  user.setAdmin(true)
  const copy: User = new User(user).setAdmin(true)
  return { name: user.name, admin: user.isAdmin(), copy: copy.isAdmin() }
})

// Guards throw errors of Fastify's shape to the app's error handler.
app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, _request, reply) => {
  if (err instanceof HttpError) return reply.code(err.statusCode).send({ message: err.message, code: err.code, headers: err.headers })
  return reply.code(err.statusCode ?? 500).send({ message: 'oops' })
})

// decoratorName: declare the new name with the package's type.
declare module 'fastify' {
  interface FastifyInstance {
    gatehouse: GatehouseAuth
  }
}
const renamed = Fastify()
await renamed.register(authPlugin, { secret: () => 's'.repeat(32), url: 'http://localhost', decoratorName: 'gatehouse' })
renamed.get('/me', { onRequest: renamed.gatehouse.authenticate }, async (request) => renamed.gatehouse.mustGetUser(request).name)
// @ts-expect-error decoratorName is a string
await renamed.register(authPlugin, { secret: () => 's'.repeat(32), url: 'http://localhost', decoratorName: 42 })

// The test helper.
const signed: SignedIn = await signIn(app, { id: 'u1', name: 'Ann' }, { aud: 'site' })
await app.inject({ method: 'GET', url: '/pre-handler/0', cookies: { ...signed.cookies }, headers: { ...signed.headers } })
// @ts-expect-error a user needs an id and a name
await signIn(app, { name: 'no id' })
