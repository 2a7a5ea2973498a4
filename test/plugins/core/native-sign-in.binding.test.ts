/**
 * What binds a native sign-in's code (RFC 8252): the client that started it, so that another app registered with
 * the same redirect URI (both can claim a private-use scheme) cannot exchange it even with the right verifier; and a
 * loopback redirect URI compared as sent (RFC 8252 §7.3 lets the port vary, nothing else): spellings a URL parser
 * turns into the registered URI (`..` segments, `0x7f.0.0.1`, a tab, a leading zero in the port) are refused
 * before anything is redirected. Two exchanges of one code at once get one pair between them.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { clientsApp } from '../../helpers/clients-app.js'
import { latencyStore } from '../../helpers/latency-store.js'

const REDIRECT = 'com.example.app:/callback'
// A store with a network's latency (test/helpers/latency-store.ts): requests sent together interleave as on Redis.
const s = await clientsApp({
  stateStore: latencyStore(),
  clients: [
    { id: 'mobile', kind: 'native', name: 'Demo phone app', redirectUris: [REDIRECT, 'http://127.0.0.1/callback'] },
    // Another app that registered the same scheme (a look-alike, or one that claims it on the user's phone).
    { id: 'lookalike', kind: 'native', name: 'Look-alike app', redirectUris: [REDIRECT] }
  ]
})
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function browserOf (name: string): Promise<string> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  return r.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
}

async function authorize (cookie: string, redirectUri: string): Promise<{ status: number; location: string | undefined; verifier: string; body: string }> {
  const verifier = oidc.randomPKCECodeVerifier()
  const search = new URLSearchParams({ response_type: 'code', client_id: 'mobile', redirect_uri: redirectUri, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 'st' })
  const r = await s.app.inject({ url: `/auth/authorize?${search.toString()}`, headers: { cookie, 'sec-fetch-site': 'none' } })
  return { status: r.statusCode, location: r.headers.location as string | undefined, verifier, body: r.body }
}

const exchange = async (fields: Record<string, string>) =>
  await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'authorization_code', ...fields }).toString() })

t.test('an authorization code is bound to the client that started it: another client with the verifier is refused', async (t) => {
  const { location, verifier } = await authorize(await browserOf('ann'), REDIRECT)
  const code = new URL(location!).searchParams.get('code')!
  const stolen = await exchange({ client_id: 'lookalike', code, redirect_uri: REDIRECT, code_verifier: verifier })
  t.equal(stolen.statusCode, 400)
  t.equal(stolen.json().error, 'invalid_grant', 'the look-alike app holding code and verifier gets nothing')
  t.equal(stolen.json().access_token, undefined)
  const own = await exchange({ client_id: 'mobile', code, redirect_uri: REDIRECT, code_verifier: verifier })
  t.equal(own.statusCode, 200, 'the refusal consumed nothing: the client that started it exchanges the code')
  const claims = await s.app.auth.tokens.parse(own.json().access_token as string)
  t.equal(claims.user?.name, 'ann')
})

t.test('two exchanges of one code at once: at most one pair', async (t) => {
  for (let round = 0; round < 5; round++) {
    const { location, verifier } = await authorize(await browserOf(`cat${round}`), REDIRECT)
    const code = new URL(location!).searchParams.get('code')!
    const fields = { client_id: 'mobile', code, redirect_uri: REDIRECT, code_verifier: verifier }
    const answers = await Promise.all([exchange(fields), exchange(fields)])
    t.equal(answers.filter((r) => r.statusCode === 200).length, 1, `round ${round}: one pair`)
    t.ok(answers.some((r) => r.statusCode === 400 && r.json().error === 'invalid_grant'), `round ${round}: the other is refused`)
  }
})

t.test('loopback redirect URIs are compared as sent: spellings that parse to the registered URI are refused', async (t) => {
  const cookie = await browserOf('bob')
  const good = await authorize(cookie, 'http://127.0.0.1:51234/callback')
  t.equal(good.status, 302)
  t.match(good.location, /^http:\/\/127\.0\.0\.1:51234\/callback\?code=[\w-]{43}&state=st&iss=/, 'the registered URI on any port (RFC 8252 §7.3)')
  for (const [name, uri] of [
    ['a .. segment', 'http://127.0.0.1:51234/x/../callback'],
    ['a . segment', 'http://127.0.0.1:51234/./callback'],
    ['a hexadecimal address', 'http://0x7f.0.0.1:51234/callback'],
    ['a short address', 'http://127.1:51234/callback'],
    ['a decimal address', 'http://2130706433:51234/callback'],
    ['a tab in the path', 'http://127.0.0.1:51234/call\tback'],
    ['a tab in the host', 'http://127.0.0.\t1:51234/callback'],
    ['a leading zero in the port', 'http://127.0.0.1:051234/callback'],
    ['the default port spelt out', 'http://127.0.0.1:80/callback'],
    ['an upper-case scheme', 'HTTP://127.0.0.1:51234/callback'],
    ['a backslash', 'http://127.0.0.1:51234\\callback'],
    ['an encoded letter', 'http://127.0.0.1:51234/%63allback'],
    ['user info', 'http://u@127.0.0.1:51234/callback']
  ]) {
    const r = await authorize(cookie, uri!)
    t.equal(r.status, 400, `${name}: 400`)
    t.equal(r.location, undefined, `${name}: nothing redirected`)
    t.match(JSON.parse(r.body), { code: 'GATEHOUSE_OAUTH', details: /redirect_uri is not registered/ }, name)
  }
})
