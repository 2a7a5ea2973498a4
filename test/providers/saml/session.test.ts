/**
 * A SAML sign-in as every provider's: the root's `providers` entry, the lockout of the ACS by address, a second
 * factor (TOTP) after SAML, `from` and `site` kept through the IdP, and single logout (the session ended here, a
 * LogoutRequest for the IdP, its LogoutResponse checked).
 */
import t, { type Test } from 'tap'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { directProvider, totpProvider } from '../../../index.js'
import { IDP_ENTITY, IDP_SLO, IDP_SSO, newId, signedResponse } from '../../helpers/saml-idp.js'
import { enrol, KEY, oathtool, secondStep, xsrf } from '../../helpers/totp-app.js'
import { fakeClock } from '../../helpers/account-app.js'
import { lastFailure, samlApp, samlKeys } from './saml-app.js'

const keys = samlKeys()

t.test('a { kind: "saml" } entry of the root\'s providers mounts the same provider', async (t) => {
  const app = await samlApp({ name: 'corp' }, {
    providers: [{ kind: 'saml', name: 'sso', idp: { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, certs: keys.idp.cert } }]
  })
  t.teardown(() => app.app.close())
  const list = await (await app.client().fetch('/auth/list')).json()
  t.same(list, ['sso', 'corp'])
  const r = await app.client().fetch('/auth/sso/login')
  t.equal(r.status, 302)
})

t.test('refused responses lock the ACS for that address: 429 with Retry-After, even for a valid response', async (t) => {
  const app = await samlApp({}, { login: { rateLimit: { login: { max: 1000 }, failures: { perAccount: 3, perIp: 3 } } } })
  t.teardown(() => app.app.close())
  for (let i = 0; i < 3; i++) {
    const c = app.client()
    const { fields } = await app.start(c)
    t.equal((await app.post(c, signedResponse(fields, keys.other.key))).status, 403, `refusal ${i + 1}`)
  }
  const c = app.client()
  const { fields } = await app.start(c)
  const r = await app.post(c, signedResponse(fields, keys.idp.key))
  t.equal(r.status, 429)
  t.ok(Number(r.headers.get('retry-after')) >= 1)
  t.equal(lastFailure(app.events), 'locked')
})

t.test('audit: every event of a SAML provider names it (its mounted name) with protocol saml and a reason; other providers\' events carry no protocol', async (t) => {
  const app = await samlApp({ name: 'sso' }, {}, async (app) => {
    await app.register(directProvider, { name: 'local', checker: (user, passwd) => user === 'bob' && passwd === 'bob-secret' })
  })
  t.teardown(() => app.app.close())
  const c = app.client()
  let started = await app.start(c)
  t.equal((await app.post(c, signedResponse(started.fields, keys.other.key))).status, 403)
  started = await app.start(c)
  t.equal((await app.post(c, signedResponse(started.fields, keys.idp.key))).status, 200)
  t.equal((await c.fetch('/auth/sso/logout', { headers: xsrf(c) })).status, 200)
  t.equal((await app.client().fetch('/auth/sso/login', { headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' } })).status, 403)
  t.equal((await app.client().fetch('/auth/local/login', { method: 'POST', json: { user: 'bob', passwd: 'bob-secret' } })).status, 200)
  t.equal((await app.client().fetch('/auth/local/login', { method: 'POST', json: { user: 'bob', passwd: 'wrong' } })).status, 403)
  const of = (type: string, provider: string): Array<Record<string, unknown>> =>
    app.events.filter((e) => e.type === type && e.provider === provider) as unknown as Array<Record<string, unknown>>
  t.match(of('login.failed', 'sso'), [{ protocol: 'saml', reason: 'saml_signature', status: 403 }], 'a refused response')
  t.match(of('login.succeeded', 'sso'), [{ protocol: 'saml', reason: 'session_issued' }], 'the session, emitted by the core')
  t.match(of('logout', 'sso'), [{ protocol: 'saml', reason: 'session' }])
  t.match(of('cross_site.refused', 'sso'), [{ protocol: 'saml' }], 'a refused /login start, emitted by the mount')
  const saml = app.events.filter((e) => e.provider === 'sso')
  t.ok(saml.length >= 4 && saml.every((e) => e.protocol === 'saml'), 'all of them')
  const local = app.events.filter((e) => e.provider === 'local')
  t.ok(local.length >= 2 && local.every((e) => !('protocol' in e)), 'a direct provider\'s events: no protocol')
})

t.test('malformed responses count toward the ACS lockout like refused ones, each answered with its own 400/413', async (t) => {
  const malformed: Record<string, (xml: string) => Record<string, string>> = {
    'not base64': () => ({ SAMLResponse: '***not base64***' }),
    'not XML': () => ({ SAMLResponse: Buffer.from('<a><b></a>').toString('base64') }),
    'a DTD': (xml) => ({ SAMLResponse: Buffer.from(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "y">]>${xml}`).toString('base64') }),
    'too large for the handler': () => ({ SAMLResponse: Buffer.alloc(260 * 1024, 'a').toString('base64') }),
    'beyond the route\'s body limit': () => ({ SAMLResponse: 'A'.repeat(1024 * 1024) })
  }
  const locked = async (t: Test, kinds: string[]): Promise<void> => {
    const app = await samlApp({}, { login: { rateLimit: { login: { max: 1000 }, failures: { perAccount: 3, perIp: 3 } } } })
    t.teardown(() => app.app.close())
    for (const kind of kinds) {
      const c = app.client()
      const { fields } = await app.start(c)
      const r = await c.fetch('/auth/saml/acs', { method: 'POST', form: malformed[kind]!(signedResponse(fields, keys.idp.key)) })
      t.ok(r.status === 400 || r.status === 413, `${kind}: ${r.status}`)
    }
    const c = app.client()
    const { fields } = await app.start(c)
    const r = await app.post(c, signedResponse(fields, keys.idp.key))
    t.equal(r.status, 429, 'then even a valid response from that address is locked out')
    t.equal(lastFailure(app.events), 'locked')
    t.ok(app.events.some((e) => e.type === 'lockout.started'))
  }
  await t.test('refused by the handler', async (t) => { await locked(t, ['not base64', 'not XML', 'a DTD']) })
  await t.test('too large, by the handler and by Fastify\'s body limit', async (t) => { await locked(t, ['too large for the handler', 'beyond the route\'s body limit', 'beyond the route\'s body limit']) })
})

t.test('from and site travel through the IdP in the login state; session=1 gives session cookies', async (t) => {
  const app = await samlApp({}, { url: 'http://127.0.0.1', audiences: ['console'] })
  t.teardown(() => app.app.close())
  const c = app.client()
  const { fields } = await app.start(c, '?from=%2Fafter&site=console&session=1')
  const r = await app.post(c, signedResponse(fields, keys.idp.key))
  t.equal(r.status, 303)
  t.equal(r.headers.get('location'), 'http://127.0.0.1/after')
  const jwt = c.jar.cookies.get('JWT')!
  t.notOk(jwt.attrs['max-age'], 'session-only')
  const claims = JSON.parse(Buffer.from(jwt.value.split('.')[1]!, 'base64url').toString()) as { aud: string[] }
  t.same(claims.aud, ['console'])
  const other = await app.client().fetch('/auth/saml/login?site=elsewhere')
  t.equal(other.status, 403, 'an audience outside `audiences` is refused before the IdP')
})

t.test('a second factor after SAML: the browser is sent to the sign-in page, which asks for the code; an API call gets the 401', async (t) => {
  const clock = fakeClock(t)
  const app = await samlApp({}, { url: 'http://localhost:8080', login: { page: '/sign-in?lang=en' } }, async (app) => {
    await app.register(totpProvider, { encryptionKey: KEY, secondFactor: ['saml'] })
  })
  t.teardown(() => app.app.close())
  const c = app.client()
  let started = await app.start(c)
  t.equal((await app.post(c, signedResponse(started.fields, keys.idp.key))).status, 200, 'no app yet: signed in')
  const { secret } = await enrol(c)
  await c.fetch('/auth/logout', { headers: xsrf(c) })

  // The IdP's page posts the response: a cross-site navigation of the browser.
  clock.tick(30_000) // the enrolment's code is spent: the next step's
  started = await app.start(c, '?from=%2Fafter')
  const navigation = { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'cross-site', origin: 'https://idp.example.test' }
  let r = await c.fetch('/auth/saml/acs', { method: 'POST', headers: navigation, form: { SAMLResponse: Buffer.from(signedResponse(started.fields, keys.idp.key)).toString('base64') } })
  t.equal(r.status, 303)
  t.equal(r.headers.get('location'), 'http://localhost:8080/sign-in?lang=en&second_factor=totp', 'the sign-in page, naming the factor')
  t.notOk(c.jar.cookies.has('JWT'), 'no session yet')
  t.ok([...c.jar.cookies.keys()].some((k) => k.startsWith('gatehouse-totp-')), 'the pending login is set')
  t.match(app.events.filter((e) => e.type === 'login.second_factor_required').at(-1), { provider: 'saml', reason: 'second_factor' })
  let done = await secondStep(c, { code: oathtool(secret) })
  t.equal(done.status, 303, 'the code completes the login')
  t.equal(done.headers.get('location'), 'http://localhost:8080/after', 'to the from of the SAML login')
  t.ok(c.jar.cookies.has('JWT'))
  await c.fetch('/auth/logout', { headers: xsrf(c) })

  // Not a navigation (a test client, a script): the 401 naming the methods, as after a password.
  clock.tick(30_000)
  started = await app.start(c)
  r = await app.post(c, signedResponse(started.fields, keys.idp.key))
  t.equal(r.status, 401)
  t.match(await r.json(), { code: 'GATEHOUSE_SECOND_FACTOR', methods: ['totp'] })
  t.notOk(c.jar.cookies.has('JWT'), 'no session yet')
  done = await secondStep(c, { code: oathtool(secret) })
  t.equal(done.status, 200)
  t.equal((await done.json()).name, 'Alice Example')
})

t.test('single logout: the session ends here, the IdP gets a LogoutRequest, its LogoutResponse is checked once', async (t) => {
  const app = await samlApp()
  t.teardown(() => app.app.close())
  const c = app.client()
  const { fields } = await app.start(c)
  const sessionIndex = newId()
  t.equal((await app.post(c, signedResponse({ ...fields, sessionIndex }, keys.idp.key))).status, 200)
  const jwt = c.jar.get('JWT')!
  const token = c.jar.get('XSRF-TOKEN')!
  t.equal((await app.client().fetch('/auth/user', { headers: { cookie: `JWT=${jwt}; XSRF-TOKEN=${token}`, 'x-xsrf-token': token } })).status, 200, 'signed in')
  const r = await c.fetch('/auth/saml/logout', { headers: xsrf(c) })
  t.equal(r.status, 200)
  const { status, location } = await r.json()
  t.equal(status, 'logged out')
  t.notOk(c.jar.cookies.has('JWT'), 'cookies cleared')
  const replay = await app.client().fetch('/auth/user', { headers: { cookie: `JWT=${jwt}; XSRF-TOKEN=${token}`, 'x-xsrf-token': token } })
  t.equal(replay.status, 401, 'the session is revoked, not only its cookie dropped')
  t.ok(app.events.some((e) => e.type === 'logout' && e.provider === 'saml'))
  const url = new URL(location)
  t.equal(url.origin + url.pathname, IDP_SLO)
  const request = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString()
  t.match(request, />alice<\/saml:NameID>/)
  t.match(request, sessionIndex)
  const rid = /ID="([^"]+)"/.exec(request)![1]!
  t.equal(url.searchParams.get('RelayState'), rid)

  const answer = (inResponseTo: string, issuer = IDP_ENTITY): string => deflateRawSync(Buffer.from(
    `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${newId()}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${app.acs.replace('acs', 'slo')}" InResponseTo="${inResponseTo}"><saml:Issuer>${issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`
  )).toString('base64')
  let back = await app.client().fetch(`/auth/saml/slo?SAMLResponse=${encodeURIComponent(answer(rid, 'https://other-idp.test'))}&RelayState=${rid}`)
  t.equal(back.status, 403, 'another issuer')
  // The request ID was taken by that attempt: a fresh logout for the good answer.
  const d = app.client()
  const s2 = await app.start(d)
  await app.post(d, signedResponse(s2.fields, keys.idp.key))
  const { location: l2 } = await (await d.fetch('/auth/saml/logout', { headers: xsrf(d) })).json()
  const rid2 = new URL(l2).searchParams.get('RelayState')!
  back = await app.client().fetch(`/auth/saml/slo?SAMLResponse=${encodeURIComponent(answer(newId()))}&RelayState=${rid2}`)
  t.equal(back.status, 403, 'answering another request')
  const d3 = app.client()
  const s3 = await app.start(d3)
  await app.post(d3, signedResponse(s3.fields, keys.idp.key))
  const { location: l3 } = await (await d3.fetch('/auth/saml/logout', { headers: xsrf(d3) })).json()
  const rid3 = new URL(l3).searchParams.get('RelayState')!
  back = await app.client().fetch(`/auth/saml/slo?SAMLResponse=${encodeURIComponent(answer(rid3))}&RelayState=${rid3}`)
  t.equal(back.status, 303)
  t.equal(back.headers.get('location'), 'http://127.0.0.1/')
  back = await app.client().fetch(`/auth/saml/slo?SAMLResponse=${encodeURIComponent(answer(rid3))}&RelayState=${rid3}`)
  t.equal(back.status, 400, 'once')
  back = await app.client().fetch('/auth/saml/slo?SAMLRequest=x')
  t.equal(back.status, 400, 'IdP-initiated logout requests are not taken')
})

t.test('logout without a session, or of another provider\'s user, only signs out here', async (t) => {
  const app = await samlApp({ idp: { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, certs: keys.idp.cert } })
  t.teardown(() => app.app.close())
  let r = await app.client().fetch('/auth/saml/logout')
  t.same(await r.json(), { status: 'logged out' })
  const c = app.client()
  const { fields } = await app.start(c)
  await app.post(c, signedResponse(fields, keys.idp.key))
  r = await c.fetch('/auth/saml/logout', { headers: xsrf(c) })
  t.same(await r.json(), { status: 'logged out' }, 'an IdP without a logout endpoint: no single logout')
})
