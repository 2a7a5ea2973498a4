/**
 * The assertion consumer service against responses signed with a test IdP key: each security check refuses its
 * bad response with its own reason (audited), and a valid response signs in. The same checks against a real
 * SimpleSAMLphp are in test/e2e/saml/.
 */
import t from 'tap'
import { client } from '../../helpers/client.js'
import { assertionXml, IDP_ENTITY, newId, responseXml, sign, signedResponse, type ResponseFields } from '../../helpers/saml-idp.js'
import { lastFailure, samlApp, samlKeys } from './saml-app.js'

const keys = samlKeys()
const app = await samlApp()
t.teardown(() => app.app.close())

/** Starts a login and posts `build(fields)`; answers the ACS's response and the failure reason audited. */
async function attempt (build: (f: ResponseFields) => string): Promise<{ r: Response; body: Record<string, unknown>; reason: string | undefined }> {
  const c = app.client()
  const { fields } = await app.start(c)
  const r = await app.post(c, build(fields))
  const body = r.headers.get('content-type')?.startsWith('application/json') === true ? await r.json() as Record<string, unknown> : {}
  return { r, body, reason: r.status === 200 ? undefined : lastFailure(app.events) }
}

t.test('a valid response signs in: user mapped from NameID and attributes, id per provider, no-store', async (t) => {
  const { r, body } = await attempt((f) => signedResponse(f, keys.idp.key))
  t.equal(r.status, 200)
  t.equal(r.headers.get('cache-control'), 'no-store')
  t.match(body, { name: 'Alice Example', email: 'alice@example.org', attrs: { groups: ['admins', 'staff'], saml: { nameId: 'alice' } } })
  t.match(body.id, /^saml_[0-9a-f]{40}$/)
  const ok = app.events.filter((e) => e.type === 'login.succeeded').at(-1)
  t.match(ok, { provider: 'saml', reason: 'session_issued', userId: body.id })
})

t.test('the login sends an AuthnRequest for this SP and its ACS, and a login-state cookie for the ACS alone', async (t) => {
  const c = app.client()
  const { location, rid } = await app.start(c)
  const url = new URL(location)
  t.equal(url.origin + url.pathname, 'https://idp.example.test/sso')
  const { xml } = (await import('../../helpers/saml-idp.js')).authnRequestOf(location)
  t.match(xml, `AssertionConsumerServiceURL="${app.acs}"`)
  t.match(xml, `>${app.entityId}</saml:Issuer>`)
  t.match(rid, /^_[0-9a-f]{40}$/)
  const state = c.jar.cookies.get('gatehouse-saml-saml')!
  t.equal(state.attrs.path, '/auth/saml/acs', 'sent to the ACS only')
  t.ok(state.attrs.httponly)
  t.notOk(state.attrs.samesite, 'no SameSite attribute on plain http')
})

t.test('the ACS takes the IdP page\'s cross-site POST (and only a POST); /login refuses a cross-site start', async (t) => {
  const c = app.client()
  const { fields } = await app.start(c)
  const crossSite = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', origin: 'https://idp.example.test' }
  const r = await c.fetch('/auth/saml/acs', { method: 'POST', headers: crossSite, form: { SAMLResponse: Buffer.from(signedResponse(fields, keys.idp.key)).toString('base64') } })
  t.equal(r.status, 200, 'the HTTP-POST binding is a cross-site form post')
  t.equal((await app.client().fetch('/auth/saml/acs')).status, 404, 'no GET')
  const start = await app.client().fetch('/auth/saml/login', { headers: crossSite })
  t.equal(start.status, 403)
  t.equal((await start.json()).code, 'GATEHOUSE_CROSS_SITE')
})

t.test('on https the login state is SameSite=None; Secure, and the ACS clears it whatever it answers', async (t) => {
  const secure = await samlApp({}, { url: 'https://app.example.test' })
  t.teardown(() => secure.app.close())
  const c = secure.client()
  const { fields } = await secure.start(c)
  const state = c.jar.cookies.get('gatehouse-saml-saml')!
  t.equal(state.attrs.samesite, 'None')
  t.ok(state.attrs.secure)
  const r = await secure.post(c, signedResponse({ ...fields, audience: 'https://elsewhere.test' }, keys.idp.key))
  t.equal(r.status, 403)
  t.notOk(c.jar.cookies.has('gatehouse-saml-saml'), 'cleared by the refused answer')
})

t.test('signatures: unsigned, unsigned assertion in a signed response, another key, SHA-1 refused', async (t) => {
  let a = await attempt((f) => signedResponse(f, keys.idp.key, { signAssertion: false }))
  t.equal(a.r.status, 403, 'unsigned')
  t.equal(a.reason, 'saml_signature')
  t.equal(a.body.code, 'GATEHOUSE_CREDENTIALS')
  a = await attempt((f) => signedResponse(f, keys.idp.key, { signAssertion: false, signResponse: true }))
  t.equal(a.r.status, 403, 'the Response signed, its assertion not: wantAssertionsSigned')
  t.equal(a.reason, 'saml_signature')
  a = await attempt((f) => signedResponse(f, keys.other.key, { signResponse: true }))
  t.equal(a.r.status, 403, 'another key')
  t.equal(a.reason, 'saml_signature')
  a = await attempt((f) => signedResponse(f, keys.idp.key, { algorithm: 'sha1' }))
  t.equal(a.r.status, 403, 'SHA-1')
  t.equal(a.reason, 'saml_sha1')
  t.match(a.body.details, /SHA-1/)
})

t.test('allowSha1 accepts an old IdP\'s SHA-1 signature', async (t) => {
  const old = await samlApp({ allowSha1: true })
  t.teardown(() => old.app.close())
  const c = old.client()
  const { fields } = await old.start(c)
  t.equal((await old.post(c, signedResponse(fields, keys.idp.key, { algorithm: 'sha1' }))).status, 200)
})

t.test('XML signature wrapping shapes are refused', async (t) => {
  const evil = (f: ResponseFields, id?: string): string => assertionXml({ ...f, nameId: 'mallory', assertionId: id })
  const shapes: Record<string, (f: ResponseFields) => string> = {
    // XSW1/2: a new Response whose unsigned evil assertion sits where the signed Response's was.
    'response wrapped, evil assertion unsigned': (f) => {
      const signed = sign(responseXml(f, sign(assertionXml(f), keys.idp.key, 'Assertion')), keys.idp.key, 'Response')
      return responseXml(f, evil(f)).replace('</samlp:Status>', `</samlp:Status><samlp:Extensions>${signed}</samlp:Extensions>`)
    },
    // XSW3: the evil assertion (same ID) before the signed one.
    'evil sibling before the signed assertion': (f) => {
      const signed = sign(assertionXml(f), keys.idp.key, 'Assertion')
      const id = /ID="([^"]+)"/.exec(signed)![1]!
      return responseXml(f, evil(f, id) + signed)
    },
    // XSW4: the signed assertion inside the evil one.
    'signed assertion inside the evil one': (f) => {
      const signed = sign(assertionXml(f), keys.idp.key, 'Assertion')
      return responseXml(f, evil(f).replace('</saml:Issuer>', `</saml:Issuer>${signed}`))
    },
    // XSW5/6: the evil assertion carries the signature; the signed original sits inside it, or in the signature.
    'signature moved onto the evil assertion': (f) => {
      const signed = sign(assertionXml(f), keys.idp.key, 'Assertion')
      const id = /ID="([^"]+)"/.exec(signed)![1]!
      const sig = /<(ds:)?Signature[\s\S]*<\/(ds:)?Signature>/.exec(signed)![0]
      const moved = sig.replace(/<\/(ds:)?SignatureValue>/, (end) => `${end}<Object xmlns="http://www.w3.org/2000/09/xmldsig#">${signed.replace(sig, '')}</Object>`)
      return responseXml(f, evil(f, id).replace('</saml:Issuer>', `</saml:Issuer>${moved}`))
    },
    // XSW7: the signed assertion hidden in an Extensions element, the evil one where an assertion belongs.
    'signed assertion in Extensions, evil one in place': (f) => {
      const signed = sign(assertionXml(f), keys.idp.key, 'Assertion')
      return responseXml(f, evil(f)).replace('</samlp:Status>', `</samlp:Status><samlp:Extensions>${signed}</samlp:Extensions>`)
    },
    // XSW8: a copy of the evil assertion in the Extensions while the signed one is in place (no signature covers it).
    'unsigned copy in Extensions beside the signed assertion': (f) => {
      const signed = sign(assertionXml(f), keys.idp.key, 'Assertion')
      return responseXml(f, signed).replace('</samlp:Status>', `</samlp:Status><samlp:Extensions>${evil(f)}</samlp:Extensions>`)
    }
  }
  for (const [shape, build] of Object.entries(shapes)) {
    const a = await attempt(build)
    t.equal(a.r.status, 403, shape)
    t.notMatch(JSON.stringify(a.body), 'mallory', `${shape}: nobody signed in`)
  }
  // Without the shape check the last one would sign alice in; it is refused for carrying two assertions.
  const a = await attempt(shapes['unsigned copy in Extensions beside the signed assertion']!)
  t.equal(a.reason, 'saml_duplicate_assertion')
  // A lone assertion out of its place (node-saml would find none; refused here first, for what it is).
  const b = await attempt((f) => responseXml(f, '').replace('</samlp:Status>', `</samlp:Status><samlp:Extensions>${sign(assertionXml(f), keys.idp.key, 'Assertion')}</samlp:Extensions>`))
  t.equal(b.r.status, 403)
  t.equal(b.reason, 'saml_wrapped')
})

t.test('two assertions, each signed, are refused', async (t) => {
  const a = await attempt((f) => responseXml(f, sign(assertionXml(f), keys.idp.key, 'Assertion') + sign(assertionXml({ ...f, nameId: 'bob' }), keys.idp.key, 'Assertion')))
  t.equal(a.r.status, 403)
  t.equal(a.reason, 'saml_duplicate_assertion')
})

t.test('a comment inside the NameID is refused (CVE-2017-11428 class)', async (t) => {
  const a = await attempt((f) => signedResponse({ ...f, nameIdXml: 'admin@example.org<!---->.evil.test' }, keys.idp.key))
  t.equal(a.r.status, 403)
  t.equal(a.reason, 'saml_comment')
})

t.test('a DTD (entity expansion, external entities) is refused before parsing', async (t) => {
  const a = await attempt((f) => `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${signedResponse({ ...f, nameIdXml: '&x;' }, keys.idp.key)}`)
  t.equal(a.r.status, 400)
  t.equal(a.reason, 'saml_dtd')
  t.match(a.body.details, /DTD/)
})

t.test('wrong parties: Destination, Recipient, Audience, Issuer', async (t) => {
  const cases: Array<[string, Partial<ResponseFields>, string]> = [
    ['Destination', { destination: 'https://other-sp.test/acs' }, 'saml_destination'],
    ['Recipient', { recipient: 'https://other-sp.test/acs' }, 'saml_recipient'],
    ['Audience', { audience: 'https://other-sp.test/metadata' }, 'saml_audience'],
    ['assertion Issuer', { issuer: 'https://other-idp.test', responseIssuer: IDP_ENTITY }, 'saml_issuer'],
    ['Response Issuer', { responseIssuer: 'https://other-idp.test' }, 'saml_issuer']
  ]
  for (const [what, change, reason] of cases) {
    const a = await attempt((f) => signedResponse({ ...f, ...change }, keys.idp.key))
    t.equal(a.r.status, 403, what)
    t.equal(a.reason, reason, what)
  }
})

t.test('time: expired and not yet valid refused, 60 s of skew allowed by default', async (t) => {
  let a = await attempt((f) => signedResponse({ ...f, notOnOrAfter: -90_000 }, keys.idp.key))
  t.equal(a.r.status, 403, 'expired 90 s ago')
  t.equal(a.reason, 'saml_expired')
  a = await attempt((f) => signedResponse({ ...f, notBefore: 90_000 }, keys.idp.key))
  t.equal(a.r.status, 403, 'valid in 90 s')
  t.equal(a.reason, 'saml_not_yet_valid')
  a = await attempt((f) => signedResponse({ ...f, notOnOrAfter: -30_000 }, keys.idp.key))
  t.equal(a.r.status, 200, 'expired 30 s ago: within the skew')
  a = await attempt((f) => signedResponse({ ...f, notBefore: 30_000 }, keys.idp.key))
  t.equal(a.r.status, 200, 'valid in 30 s: within the skew')
})

t.test('InResponseTo: another login\'s response, and an IdP-initiated one, are refused', async (t) => {
  let a = await attempt((f) => signedResponse({ ...f, inResponseTo: newId() }, keys.idp.key))
  t.equal(a.r.status, 403, 'answers another login')
  t.equal(a.reason, 'saml_in_response_to')
  a = await attempt((f) => signedResponse({ ...f, inResponseTo: undefined }, keys.idp.key))
  t.equal(a.r.status, 403, 'no InResponseTo while a login is in progress')
  t.equal(a.reason, 'saml_idp_initiated')
  const c = app.client()
  const r = await app.post(c, signedResponse({ acs: app.acs, audience: app.entityId }, keys.idp.key))
  t.equal(r.status, 400, 'no login state at all')
  t.equal((await r.json()).code, 'GATEHOUSE_HANDSHAKE')
})

t.test('allowIdpInitiated takes a response no login asked for, and still checks one that answers a login', async (t) => {
  const open = await samlApp({ allowIdpInitiated: true })
  t.teardown(() => open.app.close())
  const c = open.client()
  let r = await open.post(c, signedResponse({ acs: open.acs, audience: open.entityId }, keys.idp.key))
  t.equal(r.status, 200)
  r = await open.post(open.client(), signedResponse({ acs: open.acs, audience: open.entityId, inResponseTo: newId() }, keys.idp.key))
  t.equal(r.status, 403, 'an InResponseTo without the login state that issued it')
  t.equal(lastFailure(open.events), 'saml_in_response_to')
  // No login state binds an unsolicited response: its assertion ID alone makes it one-time.
  const xml = signedResponse({ acs: open.acs, audience: open.entityId }, keys.idp.key)
  t.equal((await open.post(open.client(), xml)).status, 200)
  r = await open.post(open.client(), xml)
  t.equal(r.status, 403, 'the same assertion again')
  t.equal(lastFailure(open.events), 'saml_replay')
})

t.test('replays: the same assertion twice, and a second response to one login', async (t) => {
  const c = app.client()
  const { fields } = await app.start(c)
  const xml = signedResponse(fields, keys.idp.key)
  const cookie = c.jar.header()
  t.equal((await app.post(c, xml)).status, 200)
  // An attacker who kept the login state cookie and the response.
  const again = app.client()
  const r = await again.fetch('/auth/saml/acs', { method: 'POST', headers: { cookie }, form: { SAMLResponse: Buffer.from(xml).toString('base64') } })
  t.equal(r.status, 403)
  t.equal((await r.json()).code, 'GATEHOUSE_ALREADY_USED')
  t.equal(lastFailure(app.events), 'saml_replay', 'the assertion ID, spent first')
  // A fresh assertion (new ID) answering the login already completed: the request ID is spent.
  const r2 = await again.fetch('/auth/saml/acs', { method: 'POST', headers: { cookie }, form: { SAMLResponse: Buffer.from(signedResponse(fields, keys.idp.key)).toString('base64') } })
  t.equal(r2.status, 403)
  t.equal(lastFailure(app.events), 'already_used', 'the login\'s request ID')
})

t.test('malformed input: not base64, not XML, not a Response, too large, missing; IdP status error', async (t) => {
  const post = async (form: Record<string, string>): Promise<{ status: number; body: { code: string }; reason: string | undefined }> => {
    const c = app.client()
    await app.start(c)
    const r = await c.fetch('/auth/saml/acs', { method: 'POST', form })
    return { status: r.status, body: await r.json(), reason: lastFailure(app.events) }
  }
  let a = await post({ SAMLResponse: '***not base64***' })
  t.match(a, { status: 400, body: { code: 'GATEHOUSE_BAD_REQUEST' }, reason: 'saml_malformed' })
  a = await post({ SAMLResponse: Buffer.from('<a><b></a>').toString('base64') })
  t.match(a, { status: 400, reason: 'saml_malformed' }, 'not XML')
  a = await post({ SAMLResponse: Buffer.from('<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>').toString('base64') })
  t.match(a, { status: 400, reason: 'saml_malformed' }, 'not a Response')
  a = await post({})
  t.match(a, { status: 400, reason: 'saml_malformed' }, 'missing')
  a = await post({ SAMLResponse: Buffer.alloc(260 * 1024, 'a').toString('base64') })
  t.match(a, { status: 413, body: { code: 'GATEHOUSE_TOO_LARGE' }, reason: 'saml_too_large' })
  a = await post({ SAMLResponse: 'A'.repeat(1024 * 1024) })
  t.match(a, { status: 413, reason: 'saml_too_large' }, 'beyond the route\'s body limit, audited too')
  const s = await attempt((f) => signedResponse({ ...f, status: 'urn:oasis:names:tc:SAML:2.0:status:Requester' }, keys.idp.key))
  t.equal(s.r.status, 403)
  t.equal(s.reason, 'saml_status')
})

t.test('no refused response signed anyone in', async (t) => {
  const failed = app.events.filter((e) => e.type === 'login.failed')
  t.ok(failed.length > 20)
  t.ok(failed.every((e) => e.provider === 'saml' && typeof e.reason === 'string' && e.reason !== 'error'), 'each with its reason')
  t.notOk(app.events.some((e) => e.type === 'login.succeeded' && JSON.stringify(e).includes('mallory')))
})

t.test('the metadata names the entity, the ACS and single logout; IDP_ENTITY is not this SP', async (t) => {
  const r = await app.client().fetch('/auth/saml/metadata')
  t.equal(r.status, 200)
  t.match(r.headers.get('content-type'), 'application/samlmetadata+xml')
  const xml = await r.text()
  t.match(xml, `entityID="${app.entityId}"`)
  t.match(xml, `Location="${app.acs}"`)
  t.match(xml, 'WantAssertionsSigned="true"')
  t.notMatch(xml, IDP_ENTITY)
})
