/**
 * Every auth route carries a schema that @fastify/swagger documents (issue 23 item 6): the generated document
 * lists each route with its method, under the `auth` tag, with the login query and the stable answers.
 */
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { authPlugin } from '../../../auth.js'
import { passkeyProvider, totpProvider } from '../../../providers/index.js'

interface Operation { tags?: string[]; summary?: string; parameters?: Array<{ name: string; in: string }>; responses?: Record<string, { content?: unknown }> }

const app = Fastify()
t.teardown(() => app.close())
await app.register(swagger, { openapi: { info: { title: 'host', version: '1' } } })
const privateKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
await app.register(authPlugin, {
  secret: () => 'routes-test-secret-0123456789-0123456789',
  url: 'http://localhost:8080',
  session: { signingKeys: [{ kid: 'k1', alg: 'ES256', privateKey }] },
  providers: [{ kind: 'direct', name: 'local', checker: () => true }, { kind: 'dev', port: 0 }]
})
await app.register(passkeyProvider, {})
await app.register(totpProvider, { encryptionKey: 'a1'.repeat(32) })
app.get('/host', async () => 'host')
await app.ready()
const paths = (app.swagger() as { paths: Record<string, Record<string, Operation>> }).paths

const expected: Array<[string, string[]]> = [
  ['/auth/list', ['get']],
  ['/auth/user', ['get']],
  ['/auth/status', ['get']],
  ['/auth/logout', ['get', 'post']],
  ['/auth/sessions', ['get', 'delete']],
  ['/auth/sessions/{id}', ['delete']],
  ['/auth/.well-known/jwks.json', ['get']],
  ['/avatar/{*}', ['get']]
]
for (const provider of ['local', 'dev', 'passkey', 'totp']) {
  for (const route of ['login', 'callback', 'logout']) expected.push([`/auth/${provider}/${route}`, ['get', 'post']])
}
expected.push(['/auth/passkey/login/options', ['post']], ['/auth/passkey/register/options', ['post']], ['/auth/passkey/register', ['post']],
  ['/auth/passkey/credentials', ['get']], ['/auth/totp/status', ['get']], ['/auth/totp/enrol', ['post']], ['/auth/totp/enrol/confirm', ['post']])

t.test('every auth route is in the document, with its methods, under the auth tag', async (t) => {
  for (const [path, methods] of expected) {
    const ops = paths[path]
    t.ok(ops, `${path} is listed`)
    for (const method of methods) {
      t.ok(ops?.[method], `${method.toUpperCase()} ${path}`)
      t.same(ops?.[method]?.tags, ['auth'], `${method.toUpperCase()} ${path} is tagged auth`)
    }
  }
  t.equal(paths['/host']?.get?.tags, undefined, 'the host\'s routes are left alone')
})

t.test('the login query, the logout flag and the stable answers are documented', async (t) => {
  const login = paths['/auth/local/login']!.get!
  t.same(login.parameters?.filter((p) => p.in === 'query').map((p) => p.name).sort(), ['aud', 'from', 'sess', 'session', 'site'])
  t.match(login.summary, /Signs in with local/)
  t.same(paths['/auth/logout']!.post!.parameters?.map((p) => p.name), ['all'])
  t.ok(paths['/auth/status']!.get!.responses?.['200']?.content, '/status documents its answer')
  t.ok(paths['/auth/list']!.get!.responses?.['200']?.content, '/list documents its answer')
  t.ok(paths['/auth/sessions']!.delete!.responses?.['200']?.content, 'DELETE /sessions documents its answer')
})

t.test('the schemas keep the answers as they were', async (t) => {
  t.same((await app.inject('/auth/status')).json(), { status: 'not logged in' })
  t.same((await app.inject('/auth/list')).json(), ['local', 'dev', 'passkey', 'totp'])
  const bad = await app.inject('/auth/local/login?session=maybe')
  t.equal(bad.statusCode, 400)
  t.same(bad.json().code, 'GATEHOUSE_BAD_REQUEST')
  const all = await app.inject({ method: 'POST', url: '/auth/logout?all=maybe', headers: { 'sec-fetch-site': 'same-origin' } })
  t.same(all.json(), { error: 'bad request', details: 'all must be 1, 0, true or false', code: 'GATEHOUSE_BAD_REQUEST' })
})
