/**
 * DPoP (RFC 9449) bad input: each proof a standard client would never send, made by hand (test/helpers/dpop.ts),
 * at a protected route and at the token endpoint. Each is refused with the RFC 9449 error (401 with a
 * `WWW-Authenticate: DPoP` challenge at a route, 400 in RFC 6749's shape at the token endpoint), issues nothing,
 * and is audited where a token was presented (`session.refused`, `token.refused`). The replay across two instances
 * on a real Redis is dpop.redis.test.ts.
 */
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { clientsApp } from '../../helpers/clients-app.js'
import { athOf, proof, proofKey, unsigned, type ProofKey } from '../../helpers/dpop.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { StateStoreError } from '../../../lib/state-store.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const s = await clientsApp({ login: { rateLimit: { grants: { perIp: 500 } } } })
t.teardown(s.close)
const PRIVATE = `${s.base}/private`
const TOKEN = `${s.base}/auth/token`

/** A pair of `mobile` bound to `key`: the app's own sign-in route (`tokens.issuePair`) with a proof of that request. */
async function boundPair (key: ProofKey, name = 'ann'): Promise<{ access_token: string; refresh_token: string; token_type: string }> {
  const r = await s.app.inject({ method: 'POST', url: '/app/pair', payload: { name }, headers: { dpop: await proof(key, { htm: 'POST', htu: `${s.base}/app/pair` }) } })
  if (r.statusCode !== 200) throw new Error(`pair answered ${r.statusCode}: ${r.body}`)
  return r.json()
}

/** GET /private with `Authorization: <scheme> <token>` and the given DPoP header(s). */
async function call (token: string, dpop: string | string[] | undefined, scheme = 'DPoP', url = '/private', method = 'GET') {
  return await s.app.inject({ method, url, headers: { authorization: `${scheme} ${token}`, ...(dpop === undefined ? {} : { dpop }) } })
}

/** The last `session.refused` event, and how many there were. */
const refusals = (): number => s.events.filter((e) => e.type === 'session.refused').length
function lastRefusal (): Record<string, unknown> | undefined {
  return s.events.filter((e) => e.type === 'session.refused').at(-1) as Record<string, unknown> | undefined
}

/** A route's DPoP refusal: 401, the RFC 9449 code in the challenge and the body, audited with `reason`. */
async function refusedAtRoute (t: Tap.Test, r: Awaited<ReturnType<typeof call>>, error: string, reason: string, before: number, source = 'dpop'): Promise<void> {
  t.equal(r.statusCode, 401)
  t.match(r.headers['www-authenticate'], new RegExp(`^DPoP error="${error}", error_description="[^"]+", algs="ES256 `), 'the DPoP challenge names the RFC 9449 error and the algorithms')
  t.match(r.json(), { error, code: 'GATEHOUSE_DPOP' })
  t.equal(refusals(), before + 1, 'audited once')
  t.match(lastRefusal(), { reason, source, userId: 'u-ann', outcome: 'failure' })
}

const key = await proofKey('ES256')
const pair = await boundPair(key)
const at = { htm: 'GET', htu: PRIVATE, token: pair.access_token }

t.test('the bound pair: token_type DPoP, and a proof of its key for this request is taken', async (t) => {
  t.equal(pair.token_type, 'DPoP', 'issuePair binds the pair to the key of its route\'s proof')
  const r = await call(pair.access_token, await proof(key, at))
  t.equal(r.statusCode, 200)
  t.same(r.json(), { name: 'ann' })
})

t.test('a bound token sent as Bearer: 401 DPoP invalid_token with algs, audited', async (t) => {
  const before = refusals()
  const r = await call(pair.access_token, await proof(key, at), 'Bearer')
  await refusedAtRoute(t, r, 'invalid_token', 'dpop_required', before, 'bearer')
  t.equal((await s.app.inject({ url: '/private', headers: { 'x-jwt': pair.access_token } })).statusCode, 401, 'so is one in X-JWT')
})

t.test("a proof signed by another key than the token's: 401 invalid_token", async (t) => {
  const before = refusals()
  await refusedAtRoute(t, await call(pair.access_token, await proof(await proofKey('ES256'), at)), 'invalid_token', 'dpop_key', before)
})

t.test('a proof naming the token\'s key but signed by another: 401 invalid_dpop_proof (signature)', async (t) => {
  const other = await proofKey('ES256')
  const before = refusals()
  const r = await call(pair.access_token, await proof({ ...other, publicJwk: key.publicJwk }, at))
  await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
  t.match(r.json().details, /signature does not verify/)
})

t.test('a proof for another method or another URL: 401 invalid_dpop_proof', async (t) => {
  for (const [name, fields, detail] of [
    ['another method', { ...at, htm: 'POST' }, /another method/],
    ['another path', { ...at, htu: `${s.base}/admin` }, /another URL/],
    ['another origin', { ...at, htu: PRIVATE.replace('127.0.0.1', 'localhost') }, /another URL/],
    ['userinfo in htu', { ...at, htu: PRIVATE.replace('http://', 'http://ann:pw@') }, /another URL/],
    ['not a URL', { ...at, htu: 'private' }, /another URL/]
  ] as const) {
    const before = refusals()
    const r = await call(pair.access_token, await proof(key, fields))
    await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
    t.match(r.json().details, detail, name)
  }
  const query = await call(pair.access_token, await proof(key, { ...at, htu: `${PRIVATE}?a=1#f` }), 'DPoP', '/private?b=2')
  t.equal(query.statusCode, 200, 'query and fragment are not compared (RFC 9449 §4.3)')
})

t.test('htu is compared with the configured url, never the Host header', async (t) => {
  const host = { host: 'evil.example' }
  const spoofed = await s.app.inject({ url: '/private', headers: { ...host, authorization: `DPoP ${pair.access_token}`, dpop: await proof(key, { ...at, htu: 'http://evil.example/private' }) } })
  t.equal(spoofed.statusCode, 401, 'a proof for the Host the request names is refused')
  const right = await s.app.inject({ url: '/private', headers: { ...host, authorization: `DPoP ${pair.access_token}`, dpop: await proof(key, at) } })
  t.equal(right.statusCode, 200, 'the proof for the public url is taken whatever Host says')
})

t.test('a proof with a private key in its jwk: refused, at a route and at the token endpoint', async (t) => {
  const before = refusals()
  const r = await call(pair.access_token, await proof(key, { ...at, header: { jwk: key.privateJwk } }))
  await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
  t.match(r.json().details, /private key/)
  const token = await tokenRequest(await proof(key, { htm: 'POST', htu: TOKEN, header: { jwk: key.privateJwk } }), 'mobile', pair.refresh_token)
  t.match(token, { status: 400, body: { error: 'invalid_dpop_proof', error_description: /private key/, code: 'GATEHOUSE_DPOP' } })
})

t.test('alg none and HS256: refused', async (t) => {
  const payload = { jti: 'j-none', htm: 'GET', htu: PRIVATE, iat: Math.floor(Date.now() / 1000), ath: athOf(pair.access_token) }
  for (const [name, value] of [
    ['alg none', unsigned({ typ: 'dpop+jwt', alg: 'none', jwk: key.publicJwk }, payload)],
    ['HS256', await hs256(payload)]
  ] as const) {
    const before = refusals()
    const r = await call(pair.access_token, value)
    await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
    t.match(r.json().details, /alg must be one of ES256/, name)
  }
})

t.test('typ other than dpop+jwt, a key of another type than alg\'s, garbage: refused', async (t) => {
  const rsa = await proofKey('RS256')
  for (const [name, value, detail] of [
    ['typ jwt', await proof(key, { ...at, header: { typ: 'JWT' } }), /typ must be dpop\+jwt/],
    ['an RSA jwk under ES256', await proof(key, { ...at, header: { jwk: rsa.publicJwk } }), /not a P-256 key/],
    ['not a JWS', 'not-a-proof', /not a compact JWS/],
    ['no jwk', await proof(key, { ...at, header: { jwk: undefined } }), /needs a jwk/],
    ['no jti', await proof(key, { ...at, payload: { jti: undefined } }), /needs a jti/]
  ] as const) {
    const before = refusals()
    const r = await call(pair.access_token, value)
    await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
    t.match(r.json().details, detail, name)
  }
})

t.test('iat 10 minutes old, or in the future: refused', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  for (const [name, iat, detail] of [['10 minutes old', now - 600, /older than 60 s/], ['a minute in the future', now + 60, /in the future/], ['past the 60 s window', now - 66, /older than/]] as const) {
    const before = refusals()
    const r = await call(pair.access_token, await proof(key, { ...at, iat }))
    await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
    t.match(r.json().details, detail, name)
  }
  t.equal((await call(pair.access_token, await proof(key, { ...at, iat: now - 60 }))).statusCode, 200, 'within the window (60 s and 5 s of skew)')
})

t.test('a replayed jti (same instance): the proof works once', async (t) => {
  const once = await proof(key, at)
  t.equal((await call(pair.access_token, once)).statusCode, 200)
  const before = refusals()
  const r = await call(pair.access_token, once)
  await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_replay', before)
  t.match(r.json().details, /used already/)
  const sameJti = await proof(key, { ...at, jti: 'fixed-jti-1' })
  t.equal((await call(pair.access_token, sameJti)).statusCode, 200)
  t.equal((await call(pair.access_token, await proof(key, { ...at, jti: 'fixed-jti-1' }))).statusCode, 401, 'a new proof with a jti of before too')
})

t.test('a missing or wrong ath: refused', async (t) => {
  for (const [name, fields, detail] of [
    ['no ath', { htm: 'GET', htu: PRIVATE }, /needs the access token's hash/],
    ['the ath of another token', { ...at, token: `${pair.access_token}x` }, /another access token/]
  ] as const) {
    const before = refusals()
    const r = await call(pair.access_token, await proof(key, fields))
    await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
    t.match(r.json().details, detail, name)
  }
})

t.test('two DPoP headers: refused (two lines on the wire, or one joined value)', async (t) => {
  const one = await proof(key, at)
  const two = await proof(key, at)
  const before = refusals()
  await refusedAtRoute(t, await call(pair.access_token, `${one}, ${two}`), 'invalid_dpop_proof', 'dpop_proof', before)
  // Two header lines over a real socket (the wire matters: an app on a loopback port): Node joins them into one
  // value, and the raw headers show both.
  const listening = await clientsApp({}, { listen: true })
  t.teardown(listening.close)
  const bound = (await listening.app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'ann' }, headers: { dpop: await proof(key, { htm: 'POST', htu: `${listening.base}/app/pair` }) } })).json()
  const onWire = { htm: 'GET', htu: `${listening.base}/private`, token: bound.access_token }
  const [first, second] = [await proof(key, onWire), await proof(key, onWire)]
  const wire = await new Promise<{ status: number; challenge: string; body: string }>((resolve, reject) => {
    const req = httpRequest(onWire.htu, { method: 'GET' }, (res) => {
      let body = ''
      res.on('data', (c: Buffer) => { body += c.toString() })
      res.on('end', () => { resolve({ status: res.statusCode!, challenge: String(res.headers['www-authenticate']), body }) })
    })
    req.on('error', reject)
    req.setHeader('authorization', `DPoP ${bound.access_token}`)
    req.setHeader('dpop', [first, second])
    req.end()
  })
  t.equal(wire.status, 401)
  t.match(wire.challenge, /^DPoP error="invalid_dpop_proof", error_description="send exactly one DPoP header"/)
  t.equal(JSON.parse(wire.body).error, 'invalid_dpop_proof')
})

t.test('a proof over 8 KB: refused before anything is parsed', async (t) => {
  const before = refusals()
  const big = await proof(key, { ...at, payload: { pad: 'x'.repeat(8 * 1024) } })
  const r = await call(pair.access_token, big)
  await refusedAtRoute(t, r, 'invalid_dpop_proof', 'dpop_proof', before)
  t.match(r.json().details, /larger than 8 KB/)
})

t.test('no proof with the DPoP scheme, or an unbound token with it: refused', async (t) => {
  const before = refusals()
  await refusedAtRoute(t, await call(pair.access_token, undefined), 'invalid_dpop_proof', 'dpop_required', before)
  const plain = await s.pair('ann')
  const r = await call(plain.access_token, await proof(key, { ...at, token: plain.access_token }))
  t.equal(r.statusCode, 401)
  t.match(r.headers['www-authenticate'], /^DPoP error="invalid_token", error_description="this token is not bound to a DPoP key/)
  t.equal((await call(plain.access_token, undefined, 'Bearer')).statusCode, 200, 'the unbound token is a Bearer token')
})

// The token endpoint: nonces, then each refusal consumes nothing and issues nothing.

/** POST /auth/token `grant_type=refresh_token` of `client` with `dpop` (or none). */
async function tokenRequest (dpop: string | undefined, client: string, refreshToken: string): Promise<{ status: number; body: Record<string, unknown>; nonce: string | undefined }> {
  const r = await s.app.inject({
    method: 'POST', url: '/auth/token', headers: { ...FORM, ...(dpop === undefined ? {} : { dpop }) },
    payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: client, refresh_token: refreshToken }).toString()
  })
  return { status: r.statusCode, body: r.json(), nonce: r.headers['dpop-nonce'] as string | undefined }
}

t.test('the token endpoint asks for a nonce (use_dpop_nonce, DPoP-Nonce) and takes the one it told', async (t) => {
  const k = await proofKey('ES384')
  const p = await boundPair(k, 'ann')
  const first = await tokenRequest(await proof(k, { htm: 'POST', htu: TOKEN }), 'mobile', p.refresh_token)
  t.match(first, { status: 400, body: { error: 'use_dpop_nonce', code: 'GATEHOUSE_DPOP' }, nonce: /^[\w-]{32}$/ })
  const stale = await tokenRequest(await proof(k, { htm: 'POST', htu: TOKEN, nonce: 'A'.repeat(32) }), 'mobile', p.refresh_token)
  t.match(stale, { status: 400, body: { error: 'use_dpop_nonce' }, nonce: first.nonce }, 'an unknown nonce: told the current one')
  const ok = await tokenRequest(await proof(k, { htm: 'POST', htu: TOKEN, nonce: first.nonce }), 'mobile', p.refresh_token)
  t.match(ok, { status: 200, body: { token_type: 'DPoP' }, nonce: first.nonce })
  t.notOk(s.events.some((e) => e.type === 'token.refused' && e.reason === 'dpop_nonce'), 'asking for a nonce is no refusal to audit')
})

t.test('the token endpoint: each bad proof is 400 invalid_dpop_proof, audited, and consumes nothing', async (t) => {
  const k = await proofKey('ES256')
  const p = await boundPair(k, 'ann')
  const nonce = (await tokenRequest(await proof(k, { htm: 'POST', htu: TOKEN }), 'mobile', p.refresh_token)).nonce!
  const good = { htm: 'POST', htu: TOKEN, nonce }
  const now = Math.floor(Date.now() / 1000)
  const cases: Array<[string, string, string, string]> = [
    ['another method', await proof(k, { ...good, htm: 'PUT' }), 'invalid_dpop_proof', 'dpop_proof'],
    ['another URL', await proof(k, { ...good, htu: `${s.base}/auth/revoke` }), 'invalid_dpop_proof', 'dpop_proof'],
    ['alg none', unsigned({ typ: 'dpop+jwt', alg: 'none', jwk: k.publicJwk }, { jti: 'n1', htm: 'POST', htu: TOKEN, iat: now, nonce }), 'invalid_dpop_proof', 'dpop_proof'],
    ['iat 10 minutes old', await proof(k, { ...good, iat: now - 600 }), 'invalid_dpop_proof', 'dpop_proof'],
    ['over 8 KB', await proof(k, { ...good, payload: { pad: 'x'.repeat(8200) } }), 'invalid_dpop_proof', 'dpop_proof'],
    ['two headers', `${await proof(k, good)},${await proof(k, good)}`, 'invalid_dpop_proof', 'dpop_proof'],
    ['another key', await proof(await proofKey('ES256'), good), 'invalid_grant', 'dpop_key']
  ]
  for (const [name, dpop, error, reason] of cases) {
    const before = s.events.filter((e) => e.type === 'token.refused').length
    const r = await tokenRequest(dpop, 'mobile', p.refresh_token)
    t.equal(r.status, 400, name)
    t.equal(r.body.error, error, name)
    t.notOk('access_token' in r.body, `${name}: nothing issued`)
    const events = s.events.filter((e) => e.type === 'token.refused')
    t.equal(events.length, before + 1, `${name}: audited`)
    t.match(events.at(-1), { reason, clientId: 'mobile' })
  }
  const replayed = await proof(k, good)
  t.equal((await tokenRequest(replayed, 'mobile', p.refresh_token)).status, 200, 'the refusals consumed nothing: the family refreshes')
  const again = await tokenRequest(replayed, 'mobile', p.refresh_token)
  t.match(again, { status: 400, body: { error: 'invalid_dpop_proof', error_description: /used already/ } }, 'a replayed proof at the token endpoint')
  t.match(s.events.filter((e) => e.type === 'token.refused').at(-1), { reason: 'dpop_replay' })
})

/** An HS256 "proof": the alg is refused before any key is looked at. */
async function hs256 (payload: Record<string, unknown>): Promise<string> {
  const { SignJWT } = await import('jose')
  return await new SignJWT(payload).setProtectedHeader({ typ: 'dpop+jwt', alg: 'HS256', jwk: key.publicJwk } as never).sign(new TextEncoder().encode('x'.repeat(32)))
}

t.test('a session\'s proofs are counted as one client of the state store: past its share, 429 for it alone', async (t) => {
  const small = await clientsApp({ stateStore: new MemoryStateStore({ maxPerClient: 3 }) })
  t.teardown(small.close)
  const bound = async (k: ProofKey): Promise<string> => (await small.app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'ann' }, headers: { dpop: await proof(k, { htm: 'POST', htu: `${small.base}/app/pair` }) } })).json().access_token
  const k1 = await proofKey()
  const k2 = await proofKey()
  const one = await bound(k1)
  const two = await bound(k2)
  const get = async (token: string, k: ProofKey) => await small.app.inject({ url: '/private', headers: { authorization: `DPoP ${token}`, dpop: await proof(k, { htm: 'GET', htu: `${small.base}/private`, token }) } })
  for (let i = 0; i < 3; i++) t.equal((await get(one, k1)).statusCode, 200, `proof ${i + 1} of the first session`)
  const past = await get(one, k1)
  t.equal(past.statusCode, 429, 'its fourth live proof: 429')
  t.match(past.json(), { code: 'GATEHOUSE_RATE_LIMITED', details: /too many DPoP proofs of this session/ })
  t.ok(Number(past.headers['retry-after']) > 0)
  t.equal((await get(two, k2)).statusCode, 200, 'another session is not affected')
})

t.test('dpop.algorithms: a proof of another algorithm is refused, even with a key another app took', async (t) => {
  const narrow = await clientsApp({ dpop: { algorithms: ['EdDSA'] } })
  t.teardown(narrow.close)
  const meta = await (await narrow.fetch(`${narrow.base}/.well-known/oauth-authorization-server/auth`)).json()
  t.same(meta.dpop_signing_alg_values_supported, ['EdDSA'])
  // `key` (ES256) signed the proofs the first app took above.
  const r = await narrow.app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'ann' }, headers: { dpop: await proof(key, { htm: 'POST', htu: `${narrow.base}/app/pair` }) } })
  t.equal(r.statusCode, 400)
  t.match(r.json(), { code: 'GATEHOUSE_DPOP', message: 'invalid_dpop_proof' })
  const ed = await proofKey('EdDSA')
  const ok = await narrow.app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'ann' }, headers: { dpop: await proof(ed, { htm: 'POST', htu: `${narrow.base}/app/pair` }) } })
  t.equal(ok.json().token_type, 'DPoP', 'an EdDSA proof binds')
})

t.test('the state store failing when a proof\'s jti is written: 503, the request not served', async (t) => {
  const memory = new MemoryStateStore()
  let failing = false
  const setIfAbsent = async (key: string, value: string, ttlMs: number, opts?: { client?: string }): Promise<boolean> => {
    if (failing && key.startsWith('dpop-jti:')) throw new StateStoreError('Redis did not answer')
    return await memory.setIfAbsent(key, value, ttlMs, opts)
  }
  // The memory store, its setIfAbsent failing on proofs' jti entries once `failing` is set.
  const store = new Proxy(memory, {
    get: (target, prop) => {
      if (prop === 'setIfAbsent') return setIfAbsent
      const v = Reflect.get(target, prop) as unknown
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v
    }
  })
  const down = await clientsApp({ stateStore: store })
  t.teardown(down.close)
  const k = await proofKey()
  const token = (await down.app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'ann' }, headers: { dpop: await proof(k, { htm: 'POST', htu: `${down.base}/app/pair` }) } })).json().access_token
  failing = true
  const r = await down.app.inject({ url: '/private', headers: { authorization: `DPoP ${token}`, dpop: await proof(k, { htm: 'GET', htu: `${down.base}/private`, token }) } })
  t.equal(r.statusCode, 503)
  t.equal(r.json().code, 'GATEHOUSE_STATE_STORE')
})
