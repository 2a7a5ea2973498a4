/**
 * ASVS 5.0 6.8.4 against a real OpenID Provider (the `oidc-provider` package on 127.0.0.1): what the provider says
 * of its sign-in (`amr`, `acr`, `auth_time` in the ID token) is read where the app says so (the OIDC provider's
 * `mfa` option): a multi-factor sign-in at the provider, recent enough, confirms the factor `idp` for the new
 * session (what `recent()` checks), at the time the provider signed the user in; anything less (one factor, an old
 * sign-in, no `auth_time`, no `mfa` option) confirms nothing. The provider's development login pages know no second
 * factor, so its ID tokens are given the claims a multi-factor sign-in would carry and signed again with its own
 * key (test/helpers/oidc-server.ts `idToken`), as the provider itself would sign them.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { decodeJwt, importJWK, SignJWT } from 'jose'
import type { FastifyInstance } from 'fastify'
import { oidcProvider } from '../../../providers/index.js'
import { OptionsError } from '../../../lib/errors.js'
import { APP_URL, bootError, startApp, type TestApp } from '../../helpers/oauth2-app.js'
import { signInAt, startOidcServer } from '../../helpers/oidc-server.js'
import type { Browser } from '../../helpers/oauth2-browser.js'

const CLIENT = { cid: 'gatehouse-mfa', csecret: randomBytes(24).toString('base64url') }
const NAMES = ['plain', 'amr', 'acr']
const op = await startOidcServer((issuer) => ({
  clients: [{
    client_id: CLIENT.cid,
    client_secret: CLIENT.csecret,
    redirect_uris: NAMES.map((n) => `${APP_URL}/auth/${n}/callback`),
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic'
  }],
  claims: { openid: ['sub'], profile: ['name'] },
  findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, name: `Name of ${id}`, iss: issuer }) })
}))
t.teardown(op.close)

/** The claims the next ID tokens carry besides the provider's own (undefined: left out). */
let reported: { amr?: string[] | undefined; acr?: string | undefined; authAgoS?: number | undefined } = {}
op.idToken = async (issued) => {
  const claims = decodeJwt(issued)
  const { amr: _amr, acr: _acr, auth_time: _at, ...rest } = claims
  const now = Math.floor(Date.now() / 1000)
  const extra = {
    ...(reported.amr === undefined ? {} : { amr: reported.amr }),
    ...(reported.acr === undefined ? {} : { acr: reported.acr }),
    ...(reported.authAgoS === undefined ? {} : { auth_time: now - reported.authAgoS })
  }
  const key = op.keys[0]!
  return await new SignJWT({ ...rest, ...extra }).setProtectedHeader({ alg: 'RS256', kid: key.kid! }).sign(await importJWK(key, 'RS256'))
}

const routes = (app: FastifyInstance): void => {
  app.get('/step-up/any', { preHandler: app.auth.recent({ within: '5m' }) }, async () => ({ ok: true }))
  app.get('/step-up/any-1m', { preHandler: app.auth.recent({ within: '1m' }) }, async () => ({ ok: true }))
  app.get('/step-up/any-10m', { preHandler: app.auth.recent({ within: '10m' }) }, async () => ({ ok: true }))
  app.get('/step-up/idp', { preHandler: app.auth.recent({ within: '5m', factor: 'idp' }) }, async () => ({ ok: true }))
  app.get('/step-up/totp', { preHandler: app.auth.recent({ within: '5m', factor: 'totp' }) }, async () => ({ ok: true }))
}
const testApp: TestApp = await startApp(async (app) => {
  await app.register(oidcProvider, { name: 'plain', ...CLIENT, issuer: op.issuer })
  await app.register(oidcProvider, { name: 'amr', ...CLIENT, issuer: op.issuer, mfa: { amr: ['mfa', 'otp', 'hwk'] } })
  await app.register(oidcProvider, { name: 'acr', ...CLIENT, issuer: op.issuer, mfa: { acr: ['urn:example:mfa'], maxAge: '10m' } })
  routes(app)
})
t.teardown(testApp.close)

/** Signs in through provider `name` with the claims `report`; the routes behind recent() that open, in order. */
async function opened (name: string, report: typeof reported): Promise<string[]> {
  reported = report
  const browser: Browser = testApp.browser()
  const nav = await signInAt(browser, op.issuer, `${APP_URL}/auth/${name}/login`, 'alice')
  if (nav.res.status !== 200) throw new Error(`sign-in through ${name}: ${nav.res.status} ${nav.body}`)
  const xsrf = browser.cookieFor(`${APP_URL}/step-up/any`, 'XSRF-TOKEN')!
  const open: string[] = []
  for (const route of ['any', 'any-1m', 'any-10m', 'idp', 'totp']) {
    const res = await browser.request(`${APP_URL}/step-up/${route}`, { headers: { 'x-xsrf-token': xsrf } })
    if (res.status === 200) open.push(route)
    else if (res.status !== 401) throw new Error(`${route}: ${res.status}`)
    await res.body?.cancel()
  }
  return open
}

t.test('a multi-factor sign-in at the IdP counts as the second factor where the app says so, from the auth_time of the IdP', async (t) => {
  t.same(await opened('amr', { amr: ['pwd', 'otp'], authAgoS: 10 }), ['any', 'any-1m', 'any-10m', 'idp'], 'amr naming a second factor: the factor idp, not totp')
  t.same(await opened('amr', { amr: ['pwd', 'otp'], authAgoS: 120 }), ['any', 'any-10m', 'idp'], 'counted from the IdP\'s sign-in (2 minutes ago), not from the callback')
  t.same(await opened('acr', { acr: 'urn:example:mfa', authAgoS: 200 }), ['any', 'any-10m', 'idp'], 'an acr of the app\'s list')
  t.same(await opened('acr', { acr: 'urn:example:mfa', authAgoS: 400 }), ['any-10m'], 'within that provider\'s maxAge of 10 minutes, 400 s old')
})

t.test('one factor, an old sign-in, no auth_time, or no mfa option: no second factor', async (t) => {
  t.same(await opened('amr', { amr: ['pwd'], authAgoS: 10 }), [], 'amr of a password alone')
  t.same(await opened('amr', { authAgoS: 10 }), [], 'no amr')
  t.same(await opened('amr', { amr: ['mfa'], authAgoS: 6 * 60 }), [], 'a multi-factor sign-in 6 minutes ago: older than the default maxAge of 5 (not even the 10-minute route)')
  t.same(await opened('amr', { amr: ['mfa'], authAgoS: -3600 }), [], 'an auth_time an hour ahead')
  t.same(await opened('amr', { amr: ['mfa'] }), [], 'no auth_time: its age is unknown')
  t.same(await opened('amr', { amr: 'mfa' as unknown as string[], authAgoS: 10 }), [], 'amr not a list')
  t.same(await opened('acr', { acr: 'urn:example:other', amr: ['mfa'], authAgoS: 10 }), [], 'another acr (the acr provider reads acr only)')
  t.same(await opened('plain', { amr: ['mfa', 'otp'], acr: 'urn:example:mfa', authAgoS: 10 }), [], 'without the mfa option the IdP\'s word is not taken')
})

t.test('a bad mfa option fails the registration, naming it', async (t) => {
  for (const [mfa, option] of [
    [{}, 'oidc.bad.mfa'],
    [{ amr: [] }, 'oidc.bad.mfa'],
    [{ amr: 'mfa' }, 'oidc.bad.mfa.amr'],
    [{ acr: [42] }, 'oidc.bad.mfa.acr'],
    [{ amr: ['mfa'], maxAge: '2d' }, 'oidc.bad.mfa.maxAge'],
    [{ amr: ['mfa'], colour: 'red' }, 'oidc.bad.mfa.colour']
  ] as const) {
    const err = await bootError(async (app) => { await app.register(oidcProvider, { name: 'bad', ...CLIENT, issuer: op.issuer, mfa: mfa as never }) })
    t.ok(err instanceof OptionsError, JSON.stringify(mfa))
    t.match(err, { option }, JSON.stringify(mfa))
  }
})
