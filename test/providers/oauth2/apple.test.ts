/**
 * Sign in with Apple: a test ES256 key pair (jose) stands for the developer key, read through the built-in file
 * loader; a local stand-in plays appleid.apple.com (form_post answer, ES256 client-secret check, RS256 ID token
 * on a local JWKS). Covers the first sign-up (name from the `user` field), later logins (no name), the
 * handshake cookie of a cross-site POST callback, and registration failures. Registered as the `appleProvider`
 * plugin, and through `fastify.auth.addAppleProvider`.
 */
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportPKCS8, generateKeyPair, jwtVerify, decodeProtectedHeader } from 'jose'
import { userId } from '../../../lib/user.js'
import { appleKeyFromFile, appleProvider } from '../../../providers/index.js'
import { startStandin, type StandinProfile } from '../../helpers/oauth2-standin.js'
import { APP_URL, bootApp, bootError, currentUser, startApp } from '../../helpers/oauth2-app.js'

const TEAM = 'TEAM123456'
const KEY_ID = 'KEY7890ABC'
const CLIENT = 'com.example.web'
const SUB = '001234.8f1c2b3a4d5e6f708192a3b4c5d6e7f8.1234'

const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-apple-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const keyFile = join(dir, `AuthKey_${KEY_ID}.p8`)
writeFileSync(keyFile, await exportPKCS8(privateKey))

const secretsSeen: Array<{ kid?: string | undefined; alg?: string | undefined; claims: Record<string, unknown> }> = []
const profile: StandinProfile = {
  clientId: CLIENT,
  clientSecret: '(a signed JWT)',
  tokenAuth: 'post',
  pkce: false,
  oidc: true,
  formPost: true,
  idClaims: { sub: SUB, email: 'x1@privaterelay.appleid.com', email_verified: 'true', is_private_email: 'true', auth_time: 1700000000, nonce_supported: true },
  // Apple checks the client secret: ES256, signed by the registered key, iss team, sub client, aud Apple.
  verifyClientSecret: async (secret) => {
    const header = decodeProtectedHeader(secret)
    const { payload } = await jwtVerify(secret, publicKey, { algorithms: ['ES256'], issuer: TEAM, subject: CLIENT, audience: apple.url })
    if (header.kid !== KEY_ID) throw new Error('wrong kid')
    secretsSeen.push({ kid: header.kid, alg: header.alg, claims: payload as Record<string, unknown> })
  }
}
const apple = await startStandin(profile)
t.teardown(apple.close)

const appleConfig = {
  clientId: CLIENT, teamId: TEAM, keyId: KEY_ID,
  authURL: `${apple.url}/authorize`, tokenURL: `${apple.url}/token`, jwksURL: `${apple.url}/jwks`, issuer: apple.url
}
const testApp = await startApp(async (app) => { await app.register(appleProvider, { ...appleConfig, keyLoader: appleKeyFromFile(keyFile) }) })
t.teardown(testApp.close)

/** Login up to Apple's auto-submitting form, then the browser's POST of it to our callback. */
async function signIn (browser = testApp.browser(), fields: Record<string, string> = {}) {
  const page = await browser.navigate(`${APP_URL}/auth/apple/login`)
  if (page.res.status !== 200) throw new Error(`authorize page answered ${page.res.status}: ${page.body}`)
  return { browser, page, nav: await browser.submitForm(page.url, page.body, fields) }
}

t.test('first sign-up: form_post callback, name from the user field, id from the ID token', async (t) => {
  profile.formUser = JSON.stringify({ name: { firstName: 'Tim', lastName: 'Apple' }, email: 'x1@privaterelay.appleid.com' })
  t.teardown(() => { delete profile.formUser })
  const { browser, page, nav } = await signIn()
  const authz = apple.authorizeRequests.at(-1)!
  t.equal(authz.get('response_mode'), 'form_post')
  t.equal(authz.get('scope'), 'name', 'minimal scope')
  t.equal(authz.get('redirect_uri'), `${APP_URL}/auth/apple/callback`)
  t.ok(authz.get('nonce'), 'nonce sent')
  t.match(page.body, new RegExp(`<form method="post" action="${APP_URL}/auth/apple/callback">`))
  t.equal(nav.hops[0]!.method, 'POST', 'the callback is a POST')
  t.equal(nav.res.status, 200, nav.body)
  t.same(JSON.parse(nav.body), { id: userId('apple', SUB), name: 'Tim Apple' })
  t.equal(testApp.avatars.at(-1), undefined, 'Apple has no picture')
  t.equal((await currentUser(browser)).status, 200)

  const secret = secretsSeen.at(-1)!
  t.equal(secret.alg, 'ES256')
  t.equal(secret.kid, KEY_ID)
  t.ok((secret.claims.exp as number) - (secret.claims.iat as number) <= 300, 'short-lived client secret')
  t.notOk(apple.tokenRequests.at(-1)!.form.code_verifier, 'no PKCE (not documented by Apple)')
})

t.test('later logins: no user field, a stable id and a placeholder name', async (t) => {
  const { nav } = await signIn()
  t.equal(nav.res.status, 200)
  const user = JSON.parse(nav.body)
  t.equal(user.id, userId('apple', SUB), 'same user id')
  t.match(user.name, /^noname_[0-9a-f]{8}$/)
})

t.test('a malformed user field only costs the name', async (t) => {
  profile.formUser = '{"name": {"firstName": '
  t.teardown(() => { delete profile.formUser })
  const { nav } = await signIn()
  t.equal(nav.res.status, 200)
  t.match(JSON.parse(nav.body).name, /^noname_/)
})

t.test('callback checks: GET with query parameters, tampered state, bad ID token', async (t) => {
  const browser = testApp.browser()
  const page = await browser.navigate(`${APP_URL}/auth/apple/login`)
  const state = /name="state" value="([^"]+)"/.exec(page.body)![1]!
  const code = /name="code" value="([^"]+)"/.exec(page.body)![1]!
  const viaGet = await browser.request(`${APP_URL}/auth/apple/callback?code=${code}&state=${state}`)
  t.equal(viaGet.status, 400, 'form_post answers are read from the POSTed form only')
  t.match(await viaGet.json(), { error: 'missing state', code: 'GATEHOUSE_BAD_REQUEST' })

  const b2 = testApp.browser()
  const p2 = await b2.navigate(`${APP_URL}/auth/apple/login`)
  const wrong = await b2.submitForm(p2.url, p2.body, { state: 'x'.repeat(43) })
  t.equal(wrong.res.status, 403)
  t.match(JSON.parse(wrong.body), { error: 'state mismatch', code: 'GATEHOUSE_STATE_MISMATCH' })
  t.equal((await currentUser(b2)).status, 401)

  apple.faults = { idToken: 'wrong-aud' }
  t.teardown(() => { apple.faults = {} })
  const { nav, browser: b3 } = await signIn()
  t.equal(nav.res.status, 401)
  t.match(JSON.parse(nav.body), { error: 'id token rejected', code: 'GATEHOUSE_UNAUTHORIZED' })
  t.equal((await currentUser(b3)).status, 401)
})

t.test('handshake cookie of a cross-site POST callback', async (t) => {
  const insecure = testApp.browser()
  await insecure.request(`${APP_URL}/auth/apple/login`)
  const attrs = insecure.cookieAttrs('gatehouse-oauth2-apple')!
  t.equal(attrs.path, '/auth/apple')
  t.equal(attrs.httponly, true)
  t.notOk(attrs.samesite, 'plain http: no SameSite, so browsers still send it on the POST right after login')

  const app = await startApp(async (app) => { await app.auth.addAppleProvider(appleConfig, appleKeyFromFile(keyFile)) }, { url: 'https://secure.test' })
  t.same(app.app.auth.providers(), ['apple'], 'mounted through fastify.auth.addAppleProvider')
  t.teardown(app.close)
  const secure = app.browser()
  await secure.request('https://secure.test/auth/apple/login')
  const sattrs = secure.cookieAttrs('gatehouse-oauth2-apple')!
  t.equal(sattrs.samesite, 'None', 'https: SameSite=None so the cross-site POST carries it')
  t.equal(sattrs.secure, true)
})

t.test('addAppleProvider: registration failures reject with an OptionsError naming the option', async (t) => {
  const app = await bootApp()
  t.teardown(() => app.close())
  const auth = app.auth
  const option = (name: string, extra: Record<string, unknown> = {}) => ({ name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: name, ...extra })
  await t.rejects(auth.addAppleProvider(appleConfig, appleKeyFromFile(join(dir, 'missing.p8'))), option('apple.keyLoader', { cause: { code: 'ENOENT' } }), 'a missing key file')
  const sealed = new Error('vault sealed')
  const failed = await auth.addAppleProvider(appleConfig, async () => { throw sealed }).catch((err: unknown) => err)
  t.match(failed, option('apple.keyLoader'), 'a failing loader')
  t.equal((failed as Error).cause, sealed, 'the loader\'s error is the cause')
  const rsa = await generateKeyPair('RS256', { extractable: true })
  await t.rejects(auth.addAppleProvider(appleConfig, async () => await exportPKCS8(rsa.privateKey)), option('apple.keyLoader'), 'an RSA key')
  await t.rejects(auth.addAppleProvider(appleConfig, async () => 'not a pem'), option('apple.keyLoader'), 'not a key')
  await t.rejects(auth.addAppleProvider(appleConfig, undefined as never), option('apple.keyLoader'), 'no loader')
  await t.rejects(auth.addAppleProvider({ ...appleConfig, teamId: '' }, appleKeyFromFile(keyFile)), option('apple.teamId'))
  await t.rejects(auth.addAppleProvider({ ...appleConfig, responseMode: 'query' }, appleKeyFromFile(keyFile)), option('apple.responseMode'), 'query with scopes')
  await app.ready()
  t.same(auth.providers(), [], 'nothing registered by a failed call')
})

t.test('addAppleProvider: a good call mounts apple once the app is ready', async (t) => {
  const app = await bootApp()
  t.teardown(() => app.close())
  await app.auth.addAppleProvider({ ...appleConfig, responseMode: 'query', scopes: [] }, appleKeyFromFile(keyFile))
  await app.ready()
  t.same(app.auth.providers(), ['apple'])
})

// The configuration check runs the key loader (no cache in between): one run per provider means one check.
t.test('Apple is validated once, whichever way it is added: the key loader runs once', async (t) => {
  const loads: string[] = []
  const counting = (way: string) => async () => { loads.push(way); return await appleKeyFromFile(keyFile)() }
  const byCall = await bootApp()
  t.teardown(() => byCall.close())
  await byCall.auth.addAppleProvider({ ...appleConfig, responseMode: 'query', scopes: [] }, counting('call'))
  await byCall.ready()
  const byEntry = await bootApp({ providers: [{ kind: 'apple', ...appleConfig, keyLoader: counting('entry') }] })
  t.teardown(() => byEntry.close())
  await byEntry.ready()
  t.same(loads, ['call', 'entry'], 'one load per provider')
  t.same([byCall.auth.providers(), byEntry.auth.providers()], [['apple'], ['apple']])
})

t.test('appleProvider plugin: a bad configuration fails the start, naming the option', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a missing key file', { ...appleConfig, keyLoader: appleKeyFromFile(join(dir, 'missing.p8')) }, 'apple.keyLoader'],
    ['no loader', { ...appleConfig }, 'apple.keyLoader'],
    ['not a key', { ...appleConfig, keyLoader: async () => 'not a pem' }, 'apple.keyLoader'],
    ['no client id', { ...appleConfig, clientId: undefined, keyLoader: appleKeyFromFile(keyFile) }, 'apple.clientId'],
    ['an unknown option', { ...appleConfig, keyFile, keyLoader: appleKeyFromFile(keyFile) }, 'apple.keyFile'],
    ['a response mode Apple does not have', { ...appleConfig, responseMode: 'fragment', keyLoader: appleKeyFromFile(keyFile) }, 'apple.responseMode']
  ]
  for (const [what, opts, option] of cases) {
    const err = await bootError(async (app) => { await app.register(appleProvider, opts as never) })
    t.match(err, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, what)
  }
})
