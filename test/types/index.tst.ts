/**
 * Type tests of the public API, compiled (not run) by `npm run typecheck` in CI: what a user writes must
 * type-check; misuse must not (each `@ts-expect-error` fails the build when the line stops being an error).
 */
import Fastify from 'fastify'
import authPlugin, { User, type AuthOptions, type Claims } from '../../index.js'

const app = Fastify()

const opts: AuthOptions = {
  secret: (aud) => `secret-${aud}`,
  url: 'https://example.com',
  tokenDuration: '15m',
  cookieDuration: 31 * 24 * 3600 * 1000,
  claimsUpdater: (claims: Claims) => ({ ...claims, plan: 'gold' }),
  validator: { validate: (_token, claims) => claims.user?.name !== 'mallory' },
  xsrf: { ignoreMethods: ['GET'] },
  providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => user === 'a' && passwd === 'b' }]
}
await app.register(authPlugin, opts)
await app.register(authPlugin, { secret: { get: async () => 's' }, url: 'http://localhost' })

app.get('/admin', { preHandler: app.auth.rbac(['admin']) }, async (request) => {
  const user: User | null = request.user
  const name: string | undefined = user?.name
  const must: User = app.auth.mustGetUser(request)
  return { name, editor: must.hasRole(['editor']), admin: must.isAdmin() }
})
app.get('/private', { preHandler: [app.auth.authenticate, app.auth.updateUser((u) => u.setBoolAttr('seen', true))] }, async () => 'ok')
app.auth.addDirectProvider('other', (u, p) => u === p)

// @ts-expect-error secret is required
const noSecret: AuthOptions = { url: 'http://x' }
// @ts-expect-error rbac takes a list of role names
app.auth.rbac('admin')
// @ts-expect-error request.user may be null
const n: string = Fastify().get('/', async (r) => r.user.name) as unknown as string
// @ts-expect-error a checker returns a boolean
app.auth.addDirectProvider('bad', (u: string) => u)
// @ts-expect-error unknown provider kinds are rejected
const badEntry: AuthOptions = { secret: () => 's', url: 'http://x', providers: [{ kind: 'nope', name: 'x' }] }
// @ts-expect-error sameSite takes only the three cookie values
const badSameSite: AuthOptions = { secret: () => 's', url: 'http://x', sameSite: 'loose' }

void noSecret; void n; void badEntry; void badSameSite
