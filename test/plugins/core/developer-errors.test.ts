/**
 * Errors a developer can act on (issue 49, item 5), each message held here: a refused `/authorize` or `/token`
 * request logs one warning naming the client id and redirect URI sent beside the registered ones (and never a code,
 * verifier, token or state); a `*` in `redirectUris` is a startup warning saying they are compared exactly; a
 * misspelt built-in provider name gets "did you mean"; an unset client id or secret points at the environment
 * variable; a Bearer token at the device page's form is told that a signed-in browser decides there.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin, oauth2Provider, appleProvider, OptionsError, type AuthOptions } from '../../../index.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { clientsApp, CLIENTS_SECRET } from '../../helpers/clients-app.js'

const logs: string[] = []
const s = await clientsApp({ logger: funcLogger((line) => { logs.push(line) }) })
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
const REGISTERED = 'registered redirect URIs of "mobile": com.example.app:/callback, http://127.0.0.1/callback (loopback ones on any port)'

/** The warnings the next call writes. */
async function warnings (call: () => Promise<unknown>): Promise<string[]> {
  const from = logs.length
  await call()
  return logs.slice(from).filter((l) => l.startsWith('[WARN]'))
}
const authorize = async (fields: Record<string, string>) => await s.app.inject({ url: `/auth/authorize?${new URLSearchParams(fields).toString()}`, headers: { 'sec-fetch-site': 'none' } })
const token = async (fields: Record<string, string>) => await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams(fields).toString() })
const AUTH = { response_type: 'code', client_id: 'mobile', redirect_uri: 'com.example.app:/callback', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 'the-state-value' }

t.test('a refused /authorize: one warning with the client id and redirect URI sent, beside the registered ones', async (t) => {
  let w = await warnings(async () => t.equal((await authorize({ ...AUTH, client_id: 'mobil' })).statusCode, 400))
  t.same(w, ['[WARN] /authorize refused (bad request: unknown client_id, or a client that does not sign in with a redirect): client_id "mobil", redirect_uri "com.example.app:/callback" sent; registered clients: mobile, cli'])
  w = await warnings(async () => t.equal((await authorize({ ...AUTH, redirect_uri: 'com.example.app://callback' })).statusCode, 400))
  t.same(w, [`[WARN] /authorize refused (bad request: redirect_uri is not registered for this client): client_id "mobile", redirect_uri "com.example.app://callback" sent; ${REGISTERED}`])
  w = await warnings(async () => t.equal((await authorize({ ...AUTH, code_challenge_method: 'plain' })).statusCode, 302))
  t.same(w, [`[WARN] /authorize refused (invalid_request: PKCE with code_challenge_method=S256 is required): client_id "mobile", redirect_uri "com.example.app:/callback" sent; ${REGISTERED}`], 'an error sent back to the client is logged too')
  w = await warnings(async () => t.equal((await authorize({ ...AUTH, client_id: 'cli' })).statusCode, 400))
  t.match(w[0], /client_id "cli", redirect_uri "com\.example\.app:\/callback" sent; "cli" is a device client \(no redirect URI\)$/)
  w = await warnings(async () => await authorize({ ...AUTH, client_id: 'x\n[WARN] forged line' }))
  t.equal(w.length, 1, 'one line')
  t.match(w[0], 'client_id "x\\n[WARN] forged line"', 'a sent value is quoted, its line break escaped')
  t.notOk(logs.some((l) => l.includes('the-state-value') || l.includes(CHALLENGE)), 'never the state or the challenge')
})

t.test('a refused /token: one warning; never the code, verifier or token; a device\'s polling answers are not warned of', async (t) => {
  let w = await warnings(async () => t.equal((await token({ grant_type: 'authorization_code', client_id: 'mobile', code: 'the-code-value-0123456789', redirect_uri: 'com.example.app:/other', code_verifier: VERIFIER })).statusCode, 400))
  t.same(w, [`[WARN] /token refused (invalid_grant: unknown or expired code): client_id "mobile", redirect_uri "com.example.app:/other" sent; ${REGISTERED}`])
  w = await warnings(async () => t.equal((await token({ grant_type: 'refresh_token', client_id: 'mobiel', refresh_token: 'the-refresh-token-value' })).statusCode, 401))
  t.same(w, ['[WARN] /token refused (invalid_client: unknown client_id): client_id "mobiel", redirect_uri none sent; registered clients: mobile, cli'])
  w = await warnings(async () => t.equal((await token({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: 'the-refresh-token-value' })).statusCode, 400))
  t.equal(w.length, 1)
  t.notOk(logs.some((l) => l.includes('the-code-value') || l.includes(VERIFIER) || l.includes('the-refresh-token-value')), 'never a code, verifier or token')

  const code = (await token({ client_id: 'cli' }).then(async () => await s.app.inject({ method: 'POST', url: '/auth/device/code', headers: FORM, payload: 'client_id=cli' }))).json().device_code
  w = await warnings(async () => t.equal((await token({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'cli', device_code: code })).json().error, 'authorization_pending'))
  t.same(w, [], 'authorization_pending is a working client, not a refusal')
})

t.test('a "*" in redirectUris is a startup warning: compared exactly', async (t) => {
  const lines: string[] = []
  const app = Fastify()
  await app.register(authPlugin, { secret: CLIENTS_SECRET, url: 'https://example.com', logger: funcLogger((l) => { lines.push(l) }), clients: [{ id: 'web', kind: 'spa', redirectUris: ['https://*.example.com/callback'] }] })
  await app.ready()
  t.same(lines.filter((l) => l.includes('redirectUris')), ['[WARN] auth options: clients[0].redirectUris: "https://*.example.com/callback" has a "*", which is no wildcard here: redirect URIs are compared exactly (a loopback one on any port), so only this very string matches'])
  await app.close()
})

/** The OptionsError a registration fails with. */
async function failure (register: (app: ReturnType<typeof Fastify>) => void): Promise<OptionsError> {
  const app = Fastify()
  await app.register(authPlugin, { secret: CLIENTS_SECRET, url: 'https://example.com' } as AuthOptions)
  register(app)
  const err = await app.ready().then(() => undefined, (e: unknown) => e)
  await app.close()
  if (!(err instanceof OptionsError)) throw new Error(`expected an OptionsError, got ${String(err)}`)
  return err
}

t.test('a misspelt built-in provider: did you mean', async (t) => {
  for (const register of [
    (app: ReturnType<typeof Fastify>) => { app.register(oauth2Provider, { name: 'githb', cid: 'c', csecret: 's' }) },
    (app: ReturnType<typeof Fastify>) => { app.auth.addProvider('githb', 'c', 's') }
  ]) {
    const err = await failure(register)
    t.equal(err.option, 'oauth2.githb.name')
    t.equal(err.message, 'fastify-gatehouse: option "oauth2.githb.name" is "githb", which is not a built-in provider; did you mean "github"? (a custom provider under this name needs an endpoint)')
  }
  const far = await failure((app) => { app.register(oauth2Provider, { name: 'mycorp', cid: 'c', csecret: 's' }) })
  t.equal(far.option, 'oauth2.mycorp.endpoint', 'a name near no built-in is a custom provider without its endpoint, as before')
})

t.test('an unset client id or secret points at the environment variable', async (t) => {
  const env = process.env.GATEHOUSE_TEST_UNSET_CID
  let err = await failure((app) => { app.register(oauth2Provider, { name: 'github', cid: env!, csecret: 's' }) })
  t.equal(err.option, 'oauth2.github.cid')
  t.equal(err.message, 'fastify-gatehouse: option "oauth2.github.cid" is missing: the client id, required (is the environment variable that holds it set?)')
  err = await failure((app) => { app.auth.addProvider('google', 'c', '') })
  t.equal(err.message, 'fastify-gatehouse: option "oauth2.google.csecret" is an empty string: the client secret, required (is the environment variable that holds it set?)')
  err = await failure((app) => { app.register(appleProvider, { clientId: env!, teamId: 'T', keyId: 'K', keyLoader: async () => '' }) })
  t.equal(err.option, 'apple.clientId')
  t.match(err.message, "is missing: Apple's clientId, required (is the environment variable that holds it set?)")
})

t.test('a Bearer token at the device page\'s form: a signed-in browser decides there', async (t) => {
  const pair = await s.pair('ann', 'mobile')
  const r = await s.app.inject({ method: 'POST', url: '/auth/device', headers: { ...FORM, authorization: `Bearer ${pair.access_token}`, origin: s.base, 'sec-fetch-site': 'same-origin' }, payload: 'user_code=BCDF-GHJK&xsrf=x&action=approve' })
  t.equal(r.statusCode, 401)
  t.same(r.json(), { error: 'unauthorized', details: 'a device is approved by a signed-in browser (its session cookie), on this page: a Bearer or header token is not taken here', code: 'GATEHOUSE_UNAUTHORIZED' })
  const none = await s.app.inject({ method: 'POST', url: '/auth/device', headers: { ...FORM, origin: s.base, 'sec-fetch-site': 'same-origin' }, payload: 'user_code=BCDF-GHJK&xsrf=x&action=approve' })
  t.equal(none.json().details, 'not logged in', 'without any token, as before')
})
