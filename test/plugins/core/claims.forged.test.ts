/**
 * Session tokens signed with the right secret but meant for something else are refused: another issuer, and a
 * token of purpose `handshake` signed with the session secret itself (not its derived key); a header naming another
 * algorithm, a signature that is not the HMAC or is another spelling of it, a sign-in in the future. Each with a control:
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

/** `token` with its header replaced by `header` and signed again with the right secret (HS256). */
function withHeader (header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const part = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')
  const head = `${part(header)}.${part(claims)}`
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`
}

t.test('a header naming another algorithm is refused though the HS256 signature is right (RFC 8725 §3.1)', async (t) => {
  for (const alg of ['HS384', 'HS512', 'none', 'hs256', 'RS256', 'ES256']) {
    const r = await userWith(withHeader({ alg, typ: 'JWT' }, session()))
    t.equal(r.status, 401, `alg ${alg}: 401`)
    t.match(r.body, { code: 'GATEHOUSE_TOKEN_INVALID' }, `alg ${alg}`)
  }
  t.equal((await userWith(withHeader({ alg: 'HS256', typ: 'JWT' }, session()))).status, 200, 'control: HS256 named')
})

t.test('a signature that is not the HMAC is refused, whatever its length; so is another spelling of the right one', async (t) => {
  const good = sign(session())
  const [head, body, sig] = good.split('.') as [string, string, string]
  const other = createHmac('sha256', 'another-secret').update(`${head}.${body}`).digest('base64url')
  t.equal((await userWith(`${head}.${body}.${other}`)).status, 401, 'an HMAC under another key (32 bytes)')
  t.equal((await userWith(`${head}.${body}.${'A'.repeat(43)}`)).status, 401, '32 zero bytes')
  // 32 bytes are 43 base64url characters with 2 bits to spare in the last: flipping a spare bit spells the same
  // bytes differently. Accepting it would make one token two strings (caches and one-time marks key on the string).
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(sig.at(-1)!)
  const respelt = sig.slice(0, -1) + alphabet[last ^ 1]!
  t.same(Buffer.from(respelt, 'base64url'), Buffer.from(sig, 'base64url'), 'the same signature bytes')
  t.equal((await userWith(`${head}.${body}.${respelt}`)).status, 401, 'a non-canonical spelling of the right signature')
  t.equal((await userWith(good)).status, 200, 'control: the canonical one')
})

t.test('a session whose sign-in (auth_time) is in the future is refused', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const r = await userWith(sign(session({ auth_time: now + 3600 })))
  t.equal(r.status, 401, 'an hour ahead: re-authentication and step-up windows would count from it')
  t.match(r.body, { code: 'GATEHOUSE_TOKEN_INVALID' })
  t.equal((await userWith(sign(session({ auth_time: now + 2 })))).status, 200, 'control: within the 5 s clock leeway')
})
