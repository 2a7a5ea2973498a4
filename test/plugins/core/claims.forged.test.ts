/**
 * Session tokens signed with the right secret but meant for something else are refused: another issuer, and a
 * token of purpose `handshake` signed with the session secret itself (not its derived key). Each with a control:
 * the same hand-made token with the right `iss` and `purpose` is accepted, so a refusal here is the check at
 * work and not some other difference.
 */
import t from 'tap'
import { createHmac, randomUUID } from 'node:crypto'
import { authPlugin } from '../../../auth.js'
import { injectApp } from '../../helpers/app.js'

const SECRET = 'forged-claims-test-secret-0123456789abcdef'
const { app, client } = await injectApp(async (app) => {
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', issuer: 'gatehouse-test' })
})
t.teardown(() => app.close())

/** An HS256 JWT made by hand (not by the package), so that any claim can be set. */
function sign (claims: Record<string, unknown>, secret = SECRET): string {
  const part = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')
  const head = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`
}

function session (over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return { aud: ['site'], iat: now, nbf: now, exp: now + 600, auth_time: now, jti: randomUUID(), iss: 'gatehouse-test', purpose: 'session', user: { name: 'mallory', id: 'local_mallory' }, ...over }
}

async function userWith (token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await client().fetch('/auth/user', { headers: { 'x-jwt': token } })
  return { status: r.status, body: await r.json() as Record<string, unknown> }
}

t.test('control: a hand-made session token with the right claims is accepted', async (t) => {
  const r = await userWith(sign(session()))
  t.equal(r.status, 200)
  t.equal(r.body.name, 'mallory')
})

t.test('the right secret, another issuer: 401', async (t) => {
  const r = await userWith(sign(session({ iss: 'someone-else' })))
  t.equal(r.status, 401)
  t.match(r.body, { code: 'GATEHOUSE_TOKEN_INVALID' })
})

t.test('a handshake token signed with the raw session secret is no session: 401', async (t) => {
  const r = await userWith(sign(session({ purpose: 'handshake' })))
  t.equal(r.status, 401)
  t.match(r.body, { code: 'GATEHOUSE_TOKEN_INVALID' })
  const confirm = await userWith(sign(session({ purpose: 'confirm' })))
  t.equal(confirm.status, 401, 'nor a confirmation token')
})
