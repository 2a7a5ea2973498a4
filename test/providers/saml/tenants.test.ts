/**
 * Where the IdP comes from: per-tenant IdPs from a host function (cached per tenant, the tenant carried in the
 * signed login state, a response checked against that tenant's IdP only), metadata by XML or by address (deadline,
 * size limit, cache, the last good copy kept), and the registration errors of bad IdP settings.
 */
import t from 'tap'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { signXml } from '@node-saml/node-saml/lib/xml.js'
import type { SamlIdp } from '../../../providers/saml/options.js'
import { OptionsError } from '../../../lib/errors.js'
import { authnRequestOf, IDP_ENTITY, signedResponse } from '../../helpers/saml-idp.js'
import { lastFailure, registration, samlApp, samlKeys } from './saml-app.js'

const keys = samlKeys()
const body = (cert: string): string => cert.replace(/-----[A-Z ]+-----|\s/g, '')

/** An IdP's metadata document. */
function metadataXml (entityId: string, cert: string, sso = 'https://idp.example.test/sso'): string {
  return `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" ID="_m1" entityID="${entityId}">` +
    '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">' +
    `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body(cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` +
    `<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sso.replace('sso', 'slo')}"/>` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sso}"/>` +
    '</md:IDPSSODescriptor></md:EntityDescriptor>'
}
const signMetadata = (xml: string, key: string): string =>
  signXml(xml, "/*[local-name(.)='EntityDescriptor']", { reference: "/*[local-name(.)='EntityDescriptor']", action: 'prepend' }, { privateKey: key, signatureAlgorithm: 'sha256', digestAlgorithm: 'sha256' })

// A metadata host: /acme (good), /slow (never answers), /big (over the size limit), /garbage, /flaky (good, then down).
let flakyUp = true
let fetches = 0
const server: Server = createServer((req, res) => {
  fetches++
  if (req.url === '/slow') return
  if (req.url === '/big') { res.end('<x>' + 'a'.repeat(2 << 20) + '</x>'); return }
  if (req.url === '/garbage') { res.end('{"not": "xml"}'); return }
  if (req.url === '/flaky' && !flakyUp) { res.statusCode = 500; res.end('down'); return }
  if (req.url === '/signed') { res.end(signMetadata(metadataXml(IDP_ENTITY, keys.idp.cert), keys.idp.key)); return }
  res.end(metadataXml(IDP_ENTITY, keys.idp.cert))
})
server.listen(0, '127.0.0.1')
await once(server, 'listening')
const host = `http://127.0.0.1:${(server.address() as { port: number }).port}`
t.teardown(() => { server.closeAllConnections(); server.close() })

const lookups: string[] = []
const TENANTS: Record<string, SamlIdp> = {
  acme: { metadataUrl: `${host}/acme` },
  globex: { entityId: 'https://globex.example.test/idp', ssoUrl: 'https://globex.example.test/sso', certs: [keys.other.cert] }
}
const app = await samlApp({
  idp: (tenant) => { lookups.push(tenant); return TENANTS[tenant] }
})
t.teardown(() => app.app.close())

t.test('each tenant signs in at its own IdP; the tenant travels in the login state; ids differ per tenant', async (t) => {
  const c = app.client()
  const acme = await app.start(c, '?tenant=acme')
  t.equal(new URL(acme.location).host, 'idp.example.test')
  let r = await app.post(c, signedResponse(acme.fields, keys.idp.key))
  t.equal(r.status, 200)
  const alice = await r.json()
  const g = app.client()
  const globex = await app.start(g, '?tenant=globex')
  t.equal(new URL(globex.location).host, 'globex.example.test')
  r = await app.post(g, signedResponse({ ...globex.fields, issuer: 'https://globex.example.test/idp' }, keys.other.key))
  t.equal(r.status, 200)
  const alsoAlice = await r.json()
  t.equal(alsoAlice.name, alice.name, 'the same NameID and attributes')
  t.not(alsoAlice.id, alice.id, 'two companies\' alice are two users')
  t.equal(alsoAlice.attrs.saml.tenant, 'globex')
})

t.test('a response is checked against the login state\'s tenant only', async (t) => {
  const c = app.client()
  const { fields } = await app.start(c, '?tenant=acme')
  // Globex's IdP (its key, its issuer) answering a login started for acme.
  const r = await app.post(c, signedResponse({ ...fields, issuer: 'https://globex.example.test/idp' }, keys.other.key))
  t.equal(r.status, 403)
  t.equal(lastFailure(app.events), 'saml_signature')
  // And ?tenant= on the ACS cannot switch it.
  const d = app.client()
  const started = await app.start(d, '?tenant=acme')
  const r2 = await d.fetch('/auth/saml/acs?tenant=globex', { method: 'POST', form: { SAMLResponse: Buffer.from(signedResponse({ ...started.fields, issuer: 'https://globex.example.test/idp' }, keys.other.key)).toString('base64') } })
  t.equal(r2.status, 403)
})

t.test('unknown, missing and malformed tenants', async (t) => {
  let r = await app.client().fetch('/auth/saml/login?tenant=initech')
  t.equal(r.status, 404)
  t.equal((await r.json()).code, 'GATEHOUSE_NOT_FOUND')
  t.equal(lastFailure(app.events), 'saml_unknown_tenant')
  r = await app.client().fetch('/auth/saml/login')
  t.equal(r.status, 400)
  t.equal(lastFailure(app.events), 'saml_unknown_tenant')
  r = await app.client().fetch('/auth/saml/login?tenant=..%2F..%2Fetc')
  t.equal(r.status, 400)
  t.notOk(lookups.some((x) => x.includes('/')), 'a malformed tenant never reaches the host')
})

t.test('the host is asked once per tenant while its answer is kept; unknown tenants are not kept', async (t) => {
  const before = lookups.length
  await app.start(app.client(), '?tenant=acme')
  await app.start(app.client(), '?tenant=globex')
  t.equal(lookups.length, before, 'both served from the cache')
  await app.client().fetch('/auth/saml/login?tenant=initech')
  await app.client().fetch('/auth/saml/login?tenant=initech')
  t.equal(lookups.length, before + 2, 'an unknown tenant is asked each time, and nothing is kept for it')
})

t.test('a flood of unknown tenants keeps nothing and evicts no known tenant', async (t) => {
  await app.start(app.client(), '?tenant=acme')
  const before = lookups.length
  for (let i = 0; i < 1100; i++) await app.client().fetch(`/auth/saml/login?tenant=nobody-${i}`)
  await app.start(app.client(), '?tenant=acme')
  t.equal(lookups.length, before + 1100, 'acme still served from the cache')
})

t.test('the tenant option reads the company from a typed e-mail address', async (t) => {
  const byDomain = await samlApp({
    idp: (tenant) => tenant === 'acme.test' ? { entityId: IDP_ENTITY, ssoUrl: 'https://idp.example.test/sso', certs: keys.idp.cert } : undefined,
    tenant: (request) => /@([a-z0-9.-]+)$/.exec(String((request.body as Record<string, unknown> | undefined)?.email ?? ''))?.[1]
  })
  t.teardown(() => byDomain.app.close())
  const c = byDomain.client()
  const r = await c.fetch('/auth/saml/login', { method: 'POST', form: { email: 'alice@acme.test' } })
  t.equal(r.status, 302)
  const { id } = authnRequestOf(r.headers.get('location')!)
  t.equal((await byDomain.post(c, signedResponse({ acs: byDomain.acs, audience: byDomain.entityId, inResponseTo: id }, keys.idp.key))).status, 200)
  const other = await byDomain.client().fetch('/auth/saml/login', { method: 'POST', form: { email: 'bob@unknown.test' } })
  t.equal(other.status, 404)
})

t.test('a host function that fails is a 503, not a crash', async (t) => {
  const broken = await samlApp({ idp: () => { throw new Error('db down') } })
  t.teardown(() => broken.app.close())
  const r = await broken.client().fetch('/auth/saml/login?tenant=acme')
  t.equal(r.status, 503)
  t.equal(lastFailure(broken.events), 'saml_tenant_lookup')
  const wrong = await samlApp({ idp: () => ({ entityId: 'x' }) as unknown as SamlIdp })
  t.teardown(() => wrong.app.close())
  const r2 = await wrong.client().fetch('/auth/saml/login?tenant=acme')
  t.equal(r2.status, 502, 'settings the host got wrong')
})

t.test('metadata by address: fetched once, kept, and the last good copy used when the host goes down', async (t) => {
  flakyUp = true
  const flaky = await samlApp({ idp: { metadataUrl: `${host}/flaky` }, idpCacheTtl: 1 })
  t.teardown(() => flaky.app.close())
  const c = flaky.client()
  const { fields } = await flaky.start(c)
  flakyUp = false
  const before = fetches
  // The kept copy is stale (1 ms): refreshing fails, the last good copy serves.
  const d = flaky.client()
  const again = await flaky.start(d)
  t.equal(fetches, before + 1, 'a refresh was tried')
  t.equal((await flaky.post(d, signedResponse(again.fields, keys.idp.key))).status, 200)
  t.equal((await flaky.post(c, signedResponse(fields, keys.idp.key))).status, 200)
})

t.test('metadata by address that is slow, too large, not XML, unreachable or unsigned: 504/502, audited', async (t) => {
  const cases: Array<[SamlIdp, number, string, RegExp]> = [
    [{ metadataUrl: `${host}/slow` }, 504, 'slow', /within 200 ms/],
    [{ metadataUrl: `${host}/big` }, 502, 'too large', /more than 1048576 bytes/],
    [{ metadataUrl: `${host}/garbage` }, 502, 'not XML', /not well-formed XML/],
    [{ metadataUrl: 'http://127.0.0.1:1/metadata' }, 502, 'unreachable', /could not be reached/],
    [{ metadataUrl: `${host}/acme`, metadataCert: keys.idp.cert }, 502, 'unsigned where a signature is required', /not signed/],
    [{ metadataUrl: `${host}/signed`, metadataCert: keys.other.cert }, 502, 'signed by another key', /not signed/]
  ]
  for (const [idp, status, what, details] of cases) {
    const a = await samlApp({ idp, timeout: 200 })
    const r = await a.client().fetch('/auth/saml/login')
    t.equal(r.status, status, what)
    t.match((await r.json()).details, details, what)
    t.equal(lastFailure(a.events), 'saml_metadata', what)
    t.notOk(a.client().jar.cookies.size, 'no login state')
    await a.app.close()
  }
  const signed = await samlApp({ idp: { metadataUrl: `${host}/signed`, metadataCert: keys.idp.cert } })
  t.teardown(() => signed.app.close())
  t.equal((await signed.client().fetch('/auth/saml/login')).status, 302, 'signed by the metadata certificate')
})

t.test('bad IdP settings stop the registration with an OptionsError naming the option', async (t) => {
  const register = registration
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{}, 'saml.saml.idp', /is required/],
    [{ idp: { metadata: '<not xml' } }, 'saml.saml.idp', /not well-formed XML/],
    [{ idp: { metadata: '<x/>' } }, 'saml.saml.idp', /EntityDescriptor/],
    [{ idp: { metadata: metadataXml(IDP_ENTITY, keys.idp.cert), metadataCert: keys.idp.cert } }, 'saml.saml.idp', /not signed/],
    [{ idp: { metadata: metadataXml(IDP_ENTITY, keys.idp.cert), extra: 1 } }, 'saml.saml.idp.extra', /not a known option/],
    [{ idp: { entityId: IDP_ENTITY, ssoUrl: 'ftp://x', certs: keys.idp.cert } }, 'saml.saml.idp.ssoUrl', /http/],
    [{ idp: { entityId: IDP_ENTITY, ssoUrl: 'https://x', certs: 'not a cert' } }, 'saml.saml.idp.certs', /X.509/],
    [{ idp: { entityId: IDP_ENTITY, ssoUrl: 'https://x', certs: keys.idp.cert }, privateKey: keys.sp.key }, 'saml.saml.cert', /required/],
    [{ idp: { entityId: IDP_ENTITY, ssoUrl: 'https://x', certs: keys.idp.cert }, tenant: () => 'a' }, 'saml.saml.tenant', /idp function/],
    [{ name: 'github', idp: { entityId: IDP_ENTITY, ssoUrl: 'https://x', certs: keys.idp.cert } }, 'saml.name', /built-in/],
    [{ idp: { entityId: IDP_ENTITY, ssoUrl: 'https://x', certs: keys.idp.cert }, maxResponseBytes: 1 << 30 }, 'saml.saml.maxResponseBytes', /8 MiB/],
    [{ idp: { entityId: IDP_ENTITY, ssoUrl: 'https://x', certs: keys.idp.cert }, clockSkew: 'soon' }, 'saml.saml.clockSkew', /duration/]
  ]
  for (const [opts, option, message] of cases) {
    const err = await register(opts)
    t.ok(err instanceof OptionsError, `${option}: an OptionsError`)
    t.match(err, { option, message }, option)
  }
  t.equal(await register({ idp: { metadata: signMetadata(metadataXml(IDP_ENTITY, keys.idp.cert), keys.idp.key), metadataCert: keys.idp.cert } }), undefined, 'signed metadata is taken')
})
