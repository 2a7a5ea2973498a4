/**
 * Test helper for the SAML provider: an identity provider's key pair (made with openssl), SAML Responses built as
 * an IdP writes them and signed with node-saml's own signer (xml-crypto), for the shapes a real IdP will not
 * produce (wrapped, duplicated, SHA-1, wrong parties, stale), and the login → ACS round trip of an injected app.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { inflateRawSync } from 'node:zlib'
import { signXml } from '@node-saml/node-saml/lib/xml.js'

export interface KeyPair { cert: string; key: string }

/** A self-signed RSA key pair for `cn`, made with openssl (as the SimpleSAMLphp harness does). */
export function keyPair (cn: string): KeyPair {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-saml-key-'))
  try {
    const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${cn}`,
      '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { stdio: 'pipe' })
    if (r.status !== 0) throw new Error(`openssl: ${String(r.stderr)}`)
    return { cert: readFileSync(join(dir, 'c.pem'), 'utf8'), key: readFileSync(join(dir, 'k.pem'), 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const IDP_ENTITY = 'https://idp.example.test/metadata'
export const IDP_SSO = 'https://idp.example.test/sso'
export const IDP_SLO = 'https://idp.example.test/slo'

/** What a response says; each field defaults to a valid answer to `inResponseTo`. */
export interface ResponseFields {
  acs: string
  audience: string
  inResponseTo?: string | undefined
  issuer?: string | undefined
  /** The Response's own Issuer; the assertion's when absent. */
  responseIssuer?: string | undefined
  destination?: string | undefined
  recipient?: string | undefined
  nameId?: string | undefined
  /** Raw XML of the NameID's content (a comment inside, …); `nameId` escaped when absent. */
  nameIdXml?: string | undefined
  attributes?: Record<string, string[]> | undefined
  /** Offsets from now in ms. */
  notBefore?: number | undefined
  notOnOrAfter?: number | undefined
  status?: string | undefined
  assertionId?: string | undefined
  sessionIndex?: string | undefined
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')
const at = (offsetMs: number): string => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d+Z$/, 'Z')
export const newId = (): string => `_${randomBytes(16).toString('hex')}`

/** The unsigned assertion XML. */
export function assertionXml (f: ResponseFields): string {
  const irt = f.inResponseTo === undefined ? '' : ` InResponseTo="${esc(f.inResponseTo)}"`
  const attrs = Object.entries(f.attributes ?? { mail: ['alice@example.org'], displayName: ['Alice Example'], groups: ['admins', 'staff'] })
    .map(([n, vs]) => `<saml:Attribute Name="${esc(n)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${vs.map((v) => `<saml:AttributeValue xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`)
    .join('')
  return `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${f.assertionId ?? newId()}" Version="2.0" IssueInstant="${at(0)}">` +
    `<saml:Issuer>${esc(f.issuer ?? IDP_ENTITY)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${f.nameIdXml ?? esc(f.nameId ?? 'alice')}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${at(f.notOnOrAfter ?? 300_000)}"${f.notBefore === undefined ? '' : ` NotBefore="${at(f.notBefore)}"`} Recipient="${esc(f.recipient ?? f.acs)}"${irt}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${at(f.notBefore ?? -30_000)}" NotOnOrAfter="${at(f.notOnOrAfter ?? 300_000)}"><saml:AudienceRestriction><saml:Audience>${esc(f.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="${f.sessionIndex ?? newId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement>${attrs}</saml:AttributeStatement></saml:Assertion>`
}

/** A Response around `inner` (an assertion's XML, signed or not, or several). */
export function responseXml (f: ResponseFields, inner: string): string {
  const irt = f.inResponseTo === undefined ? '' : ` InResponseTo="${esc(f.inResponseTo)}"`
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${newId()}" Version="2.0" IssueInstant="${at(0)}" Destination="${esc(f.destination ?? f.acs)}"${irt}>` +
    `<saml:Issuer>${esc(f.responseIssuer ?? f.issuer ?? IDP_ENTITY)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="${f.status ?? 'urn:oasis:names:tc:SAML:2.0:status:Success'}"/></samlp:Status>${inner}</samlp:Response>`
}

export type Algorithm = 'sha1' | 'sha256'

/** Signs the element `xpath` selects (enveloped, exclusive c14n), the Signature placed after its Issuer. */
export function sign (xml: string, key: string, element: 'Assertion' | 'Response', algorithm: Algorithm = 'sha256'): string {
  const xpath = element === 'Assertion' ? "//*[local-name(.)='Assertion']" : "/*[local-name(.)='Response']"
  return signXml(xml, xpath, { reference: `${xpath}/*[local-name(.)='Issuer']`, action: 'after' }, { privateKey: key, signatureAlgorithm: algorithm, digestAlgorithm: algorithm })
}

/** A response as SimpleSAMLphp sends one: the assertion signed, then the Response. */
export function signedResponse (f: ResponseFields, key: string, opts: { algorithm?: Algorithm; signResponse?: boolean; signAssertion?: boolean } = {}): string {
  const assertion = opts.signAssertion === false ? assertionXml(f) : sign(assertionXml(f), key, 'Assertion', opts.algorithm)
  const response = responseXml(f, assertion)
  return opts.signResponse === true ? sign(response, key, 'Response', opts.algorithm) : response
}

export const b64 = (xml: string): string => Buffer.from(xml, 'utf8').toString('base64')

/** The AuthnRequest of a redirect to the IdP (HTTP-Redirect binding: deflated, base64, in the query). */
export function authnRequestOf (location: string): { id: string; xml: string; url: URL } {
  const url = new URL(location)
  const xml = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8')
  const id = /\sID="([^"]+)"/.exec(xml)?.[1]
  if (id === undefined) throw new Error(`no AuthnRequest ID in ${xml}`)
  return { id, xml, url }
}
