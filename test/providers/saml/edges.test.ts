/**
 * The SAML provider's less travelled paths: a forged or foreign login state, a signing SP (signed AuthnRequests,
 * its certificate in the metadata), a mapping that fails, a state store that cannot answer, a response node-saml
 * refuses for a reason of its own, IdP-initiated sign-in per tenant, a logout whose IdP is gone, a LogoutResponse
 * by POST, metadata with SHA-1 or without a usable endpoint, and the driver failing to load.
 */
import t from 'tap'
import Fastify from 'fastify'
import { signXml } from '@node-saml/node-saml/lib/xml.js'
import { authPlugin } from '../../../auth.js'
import { samlProvider } from '../../../index.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { StateStoreError } from '../../../lib/state-store.js'
import { OptionsError } from '../../../lib/errors.js'
import * as drivers from '../../../lib/optional-driver.js'
import { assertionXml, IDP_ENTITY, IDP_SLO, IDP_SSO, responseXml, sign, signedResponse } from '../../helpers/saml-idp.js'
import { xsrf } from '../../helpers/totp-app.js'
import { lastFailure, registration, samlApp, samlKeys, SECRET } from './saml-app.js'

const keys = samlKeys()

t.test('a forged login state, or another provider\'s, is refused before the response is read', async (t) => {
  const app = await samlApp({}, {}, async (app) => {
    await app.register(samlProvider, { name: 'other', idp: { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, certs: keys.idp.cert } })
  })
  t.teardown(() => app.app.close())
  const c = app.client()
  const { fields } = await app.start(c)
  const real = c.jar.get('gatehouse-saml-saml')!
  let r = await app.client().fetch('/auth/saml/acs', { method: 'POST', headers: { cookie: `gatehouse-saml-saml=${real.slice(0, -4)}AAAA` }, form: { SAMLResponse: Buffer.from(signedResponse(fields, keys.idp.key)).toString('base64') } })
  t.equal(r.status, 403)
  t.equal((await r.json()).code, 'GATEHOUSE_HANDSHAKE')
  const d = app.client()
  await d.fetch('/auth/other/login')
  r = await app.client().fetch('/auth/saml/acs', { method: 'POST', headers: { cookie: `gatehouse-saml-saml=${d.jar.get('gatehouse-saml-other')!}` }, form: { SAMLResponse: Buffer.from(signedResponse(fields, keys.idp.key)).toString('base64') } })
  t.equal(r.status, 403, 'another provider\'s login state')
  t.equal(lastFailure(app.events), 'handshake')
})

t.test('an SP with a key signs its AuthnRequests with SHA-256 and publishes its certificate', async (t) => {
  const app = await samlApp({ privateKey: keys.sp.key, cert: keys.sp.cert })
  t.teardown(() => app.app.close())
  const c = app.client()
  const { location, fields } = await app.start(c)
  const url = new URL(location)
  t.equal(url.searchParams.get('SigAlg'), 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
  t.ok(url.searchParams.get('Signature'), 'signed')
  t.equal((await app.post(c, signedResponse(fields, keys.idp.key))).status, 200)
  const metadata = await (await app.client().fetch('/auth/saml/metadata')).text()
  const body = keys.sp.cert.replace(/-----[A-Z ]+-----|\s/g, '')
  t.match(metadata, /use="signing"/)
  t.match(metadata, /use="encryption"/)
  t.ok(metadata.replace(/\s/g, '').includes(body), 'the certificate')
})

t.test('a mapping that throws, or answers no id, refuses the sign-in (502)', async (t) => {
  for (const mapUser of [() => { throw new Error('no such employee') }, () => ({ id: '' })]) {
    const app = await samlApp({ mapUser })
    const c = app.client()
    const { fields } = await app.start(c)
    const r = await app.post(c, signedResponse(fields, keys.idp.key))
    t.equal(r.status, 502)
    t.equal(lastFailure(app.events), 'saml_mapping')
    t.notOk(c.jar.get('JWT'))
    await app.app.close()
  }
})

t.test('a state store that cannot answer is a 503, audited as such, and signs nobody in', async (t) => {
  class Down extends MemoryStateStore {
    down = false
    override async setIfAbsent (key: string, value: string, ttlMs: number, opts?: { client?: string | undefined }): Promise<boolean> {
      if (this.down && key.startsWith('saml-')) throw new StateStoreError('Redis did not answer')
      return await super.setIfAbsent(key, value, ttlMs, opts)
    }
  }
  const store = new Down()
  const app = await samlApp({}, { stateStore: store })
  t.teardown(() => app.app.close())
  const c = app.client()
  const { fields } = await app.start(c)
  store.down = true
  const r = await app.post(c, signedResponse(fields, keys.idp.key))
  t.equal(r.status, 503)
  t.equal(lastFailure(app.events), 'state_store_unavailable')
})

t.test('a response node-saml refuses for a reason of its own (two Conditions) is refused as invalid', async (t) => {
  const app = await samlApp()
  t.teardown(() => app.app.close())
  const c = app.client()
  const { fields } = await app.start(c)
  const plain = assertionXml(fields)
  const conditions = /<saml:Conditions[\s\S]*<\/saml:Conditions>/.exec(plain)![0]
  const r = await app.post(c, responseXml(fields, sign(plain.replace(conditions, conditions + conditions), keys.idp.key, 'Assertion')))
  t.equal(r.status, 403)
  t.equal(lastFailure(app.events), 'saml_invalid')
})

t.test('IdP-initiated sign-in per tenant: the tenant from the ACS address given to that IdP', async (t) => {
  const app = await samlApp({ allowIdpInitiated: true, idp: (tenant) => tenant === 'acme' ? { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, certs: keys.idp.cert } : undefined })
  t.teardown(() => app.app.close())
  const xml = signedResponse({ acs: app.acs, audience: app.entityId }, keys.idp.key)
  let r = await app.client().fetch('/auth/saml/acs?tenant=acme', { method: 'POST', form: { SAMLResponse: Buffer.from(xml).toString('base64') } })
  t.equal(r.status, 200)
  t.match(await r.json(), { attrs: { saml: { tenant: 'acme' } } })
  r = await app.client().fetch('/auth/saml/acs', { method: 'POST', form: { SAMLResponse: Buffer.from(signedResponse({ acs: app.acs, audience: app.entityId }, keys.idp.key)).toString('base64') } })
  t.equal(r.status, 400, 'no tenant')
})

t.test('a tenant function that throws is a 503; certs that are not a list of certificates an OptionsError', async (t) => {
  const app = await samlApp({ idp: () => undefined, tenant: () => { throw new Error('directory down') } })
  t.teardown(() => app.app.close())
  const r = await app.client().fetch('/auth/saml/login')
  t.equal(r.status, 503)
  t.equal(lastFailure(app.events), 'saml_tenant_lookup')
  const bad = Fastify()
  await bad.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1' })
  await t.rejects(bad.register(samlProvider, { idp: { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, certs: [] } }).ready(), { option: 'saml.saml.idp.certs', message: /non-empty list/ })
  await bad.close()
})

t.test('a logout whose IdP can no longer be found still signs out here, and says so in the log', async (t) => {
  let known = true
  const app = await samlApp({ idpCacheTtl: 1, idp: () => known ? { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, sloUrl: IDP_SLO, certs: keys.idp.cert } : undefined })
  t.teardown(() => app.app.close())
  const c = app.client()
  const { fields } = await app.start(c, '?tenant=acme')
  t.equal((await app.post(c, signedResponse(fields, keys.idp.key))).status, 200)
  known = false
  const r = await c.fetch('/auth/saml/logout', { headers: xsrf(c) })
  t.same(await r.json(), { status: 'logged out' })
  t.notOk(c.jar.get('JWT'))
})

t.test('a LogoutResponse by POST is checked too: an unsigned one is refused', async (t) => {
  const app = await samlApp()
  t.teardown(() => app.app.close())
  const c = app.client()
  const { fields } = await app.start(c)
  await app.post(c, signedResponse(fields, keys.idp.key))
  const { location } = await (await c.fetch('/auth/saml/logout', { headers: xsrf(c) })).json()
  const rid = new URL(location).searchParams.get('RelayState')!
  const answer = `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_x1" Version="2.0" IssueInstant="${new Date().toISOString()}" InResponseTo="${rid}"><saml:Issuer>${IDP_ENTITY}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`
  const r = await app.client().fetch('/auth/saml/slo', { method: 'POST', form: { SAMLResponse: Buffer.from(answer).toString('base64'), RelayState: rid } })
  t.equal(r.status, 403)
})

t.test('metadata signed with SHA-1, or without a usable sign-on endpoint, and an unreadable SP key: OptionsErrors', async (t) => {
  const metadata = (sso: string): string => `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" ID="_m" entityID="${IDP_ENTITY}"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:KeyDescriptor><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${keys.idp.cert.replace(/-----[A-Z ]+-----|\s/g, '')}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sso}"/></md:IDPSSODescriptor></md:EntityDescriptor>`
  const sha1 = signXml(metadata(IDP_SSO), "/*[local-name(.)='EntityDescriptor']", { reference: "/*[local-name(.)='EntityDescriptor']", action: 'prepend' }, { privateKey: keys.idp.key, signatureAlgorithm: 'sha1', digestAlgorithm: 'sha1' })
  const register = registration
  t.match(await register({ idp: { metadata: sha1, metadataCert: keys.idp.cert } }), { option: 'saml.saml.idp', message: /SHA-1/ })
  t.equal(await register({ idp: { metadata: sha1, metadataCert: keys.idp.cert }, allowSha1: true }), undefined, 'allowSha1 takes it')
  t.match(await register({ idp: { metadata: metadata('not a url') } }), { option: 'saml.saml.idp', message: /SingleSignOnService/ })
  const err = await register({ idp: { metadata: metadata(IDP_SSO) }, privateKey: 'not a key', cert: keys.sp.cert })
  t.ok(err instanceof OptionsError)
  t.match(err, { option: 'saml.saml.privateKey', message: /private key/ })
})

t.test('a driver that is installed but fails to load is tried again at the next registration', async (t) => {
  let calls = 0
  const { loadSamlDriver } = await t.mockImport<typeof import('../../../providers/saml/driver.js')>('../../../providers/saml/driver.js', {
    '../../../lib/optional-driver.js': { ...drivers, importDriver: async () => { calls++; throw new Error('broken build') } }
  })
  await t.rejects(loadSamlDriver('saml.a'), /broken build/)
  await t.rejects(loadSamlDriver('saml.b'), /broken build/)
  t.equal(calls, 2, 'not the first failure kept')
})
