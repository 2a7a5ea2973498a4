/**
 * The assertion consumer service's check of a SAML Response, in order, each refusal with its audit reason:
 *
 * 1. the form field: one base64 string of at most `maxResponseBytes` of XML (400 `saml_malformed`, 413 `saml_too_large`);
 * 2. the XML: well-formed, without a document type (400 `saml_dtd`: no DTD, no entity), a `samlp:Response` root;
 * 3. its shape, before any signature is looked at: exactly one Assertion or EncryptedAssertion in the whole document,
 *    a child of the Response (403 `saml_duplicate_assertion`, `saml_wrapped`: the room XML signature wrapping needs); no comment or
 *    processing instruction (403 `saml_comment`: a comment splits a NameID's text, CVE-2017-11428); no SHA-1
 *    signature or digest unless `allowSha1` (403 `saml_sha1`); a Success status (403 `saml_status`);
 * 4. node-saml (client.ts): the assertion signed by one of this IdP's certificates, decrypted first when encrypted,
 *    `InResponseTo` equal to the login state's request ID (or absent only with `allowIdpInitiated`), the audience,
 *    `NotBefore`/`NotOnOrAfter` within `clockSkew`;
 * 5. what node-saml leaves to the SP, on the verified assertion: its `Issuer` (and the Response's) is the IdP's
 *    entity id (`saml_issuer`), the Response's `Destination` (`saml_destination`) and a bearer confirmation's
 *    `Recipient` (`saml_recipient`) are this ACS;
 * 6. the assertion's ID once per IdP, remembered in the state store until the assertion expires (`saml_replay`):
 *    a second instance sharing the store refuses the replay too.
 */
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { Profile } from '@node-saml/node-saml'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import type { ProviderKit } from '../../plugins/core/kit.js'
import type { SamlDriver } from './driver.js'
import type { ResolvedIdp } from './metadata.js'
import type { ResolvedSaml } from './options.js'
import { samlClient, type Expected } from './client.js'
import type { SamlAssertion } from './user.js'
import { attr, children, elements, malformed, NS, parseXml, refused, refuseSha1, type XmlNode } from './xml.js'

const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
/** Longest an assertion ID is remembered: a longer-lived assertion is refused anyway by the time check. */
const MAX_REPLAY_MS = 24 * 60 * 60_000

/** Decodes the `SAMLResponse` field: one base64 string of at most `max` bytes decoded. */
export function decodeResponse (value: unknown, max: number): string {
  if (value === undefined || value === '') throw malformed('SAMLResponse is required', 'saml_malformed')
  if (typeof value !== 'string') throw malformed('SAMLResponse must be given once, as a string', 'saml_malformed')
  const b64 = value.replace(/[\r\n\t ]+/g, '')
  if (b64.length > Math.ceil(max / 3) * 4) {
    throw new HttpError(413, 'SAML response too large', `more than ${max} bytes`, ErrorCodes.TOO_LARGE, { reason: 'saml_too_large' })
  }
  if (b64.length % 4 !== 0 || !BASE64.test(b64)) throw malformed('SAMLResponse is not base64', 'saml_malformed')
  return b64
}

/** What the provider needs of a checked response. */
export interface CheckedResponse { assertion: SamlAssertion; assertionId: string; expiresAt: number }

/** Runs the checks above against `idp`; `expected` is the login state's request, undefined for an IdP-initiated response. */
export async function checkResponse (
  kit: ProviderKit, driver: SamlDriver, o: ResolvedSaml, request: FastifyRequest, idp: ResolvedIdp, b64: string,
  expected: Expected | undefined, tenant: string | undefined
): Promise<CheckedResponse> {
  const doc = await parseXml(driver, Buffer.from(b64, 'base64').toString('utf8'), 'SAML response')
  const root = doc.documentElement!
  if (root.localName !== 'Response' || root.namespaceURI !== NS.protocol) throw malformed('not a SAML 2.0 Response', 'saml_malformed')
  checkShape(doc, root, o.allowSha1)
  let profile: Profile | null
  try {
    ({ profile } = await samlClient(driver, o, idp, expected).validatePostResponseAsync({ SAMLResponse: b64 }))
  } catch (err) {
    throw libraryRefusal(err, root, o.clockSkewMs)
  }
  if (profile === null) throw refused('the response carries no assertion', 'saml_no_assertion')
  const verified = (await parseXml(driver, profile.getAssertionXml!(), 'assertion')).documentElement!
  const expiresAt = checkParties(o, idp, root, verified)
  const assertionId = attr(verified, 'ID')
  if (assertionId === undefined) throw refused('the assertion has no ID', 'saml_invalid')
  const assertion: SamlAssertion = {
    nameId: profile.nameID,
    nameIdFormat: profile.nameIDFormat ?? undefined,
    sessionIndex: profile.sessionIndex ?? undefined,
    issuer: idp.entityId,
    tenant,
    attributes: attributesOf(profile)
  }
  if (typeof assertion.nameId !== 'string' || assertion.nameId === '') throw refused('the assertion names no subject (NameID)', 'saml_subject')
  await spendAssertion(kit, request, o.clockSkewMs, idp.entityId, assertionId, expiresAt)
  return { assertion, assertionId, expiresAt }
}

/** Step 3: one assertion where it belongs, no comment, no SHA-1, a Success status. */
function checkShape (doc: XmlNode, root: XmlNode, allowSha1: boolean): void {
  const all = [...elements(doc, NS.assertion, 'Assertion'), ...elements(doc, NS.assertion, 'EncryptedAssertion')]
  if (all.length > 1) throw refused('the response carries more than one assertion', 'saml_duplicate_assertion')
  if (all.length === 1 && all[0]!.parentNode !== root) throw refused('the assertion is not where a response carries it (signature wrapping)', 'saml_wrapped')
  if (hasCommentOrPi(root)) throw refused('the response contains an XML comment or processing instruction', 'saml_comment')
  refuseSha1(root, allowSha1)
  const status = children(children(root, NS.protocol, 'Status')[0] ?? root, NS.protocol, 'StatusCode')[0]
  const code = status === undefined ? undefined : attr(status, 'Value')
  if (code !== SUCCESS) {
    const sub = status === undefined ? undefined : children(status, NS.protocol, 'StatusCode')[0]
    const second = sub === undefined ? undefined : attr(sub, 'Value')
    throw refused(`the identity provider did not sign the user in (${(second ?? code ?? 'no status').replace(/^.*:/, '')})`, 'saml_status')
  }
}

function hasCommentOrPi (node: XmlNode): boolean {
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === 7 || child.nodeType === 8) return true
    if (child.nodeType === 1 && hasCommentOrPi(child)) return true
  }
  return false
}

/** Step 5 on the verified assertion (and the Response around it): issuer, destination, recipient. Answers when the assertion expires. */
function checkParties (o: ResolvedSaml, idp: ResolvedIdp, response: XmlNode, assertion: XmlNode): number {
  const issuerOf = (n: XmlNode): string | undefined => children(n, NS.assertion, 'Issuer')[0]?.textContent?.trim()
  if (issuerOf(assertion) !== idp.entityId) throw refused('the assertion was issued by another identity provider', 'saml_issuer')
  const outer = issuerOf(response)
  if (outer !== undefined && outer !== idp.entityId) throw refused('the response was issued by another identity provider', 'saml_issuer')
  if (attr(response, 'Destination') !== o.acsUrl) throw refused('the response is addressed to another service (Destination)', 'saml_destination')
  const subject = children(assertion, NS.assertion, 'Subject')[0]
  const bearer = subject === undefined
    ? []
    : children(subject, NS.assertion, 'SubjectConfirmation').filter((c) => attr(c, 'Method') === BEARER)
      .flatMap((c) => children(c, NS.assertion, 'SubjectConfirmationData'))
  const ours = bearer.filter((d) => attr(d, 'Recipient') === o.acsUrl)
  if (ours.length === 0) throw refused('the assertion is for another service (Recipient)', 'saml_recipient')
  // Until when the assertion could pass the time checks: its latest NotOnOrAfter.
  const ends = [...ours, ...children(assertion, NS.assertion, 'Conditions')]
    .map((n) => Date.parse(attr(n, 'NotOnOrAfter') ?? ''))
    .filter((t) => Number.isFinite(t))
  if (ends.length === 0) throw refused('the assertion has no NotOnOrAfter', 'saml_expired')
  return Math.max(...ends)
}

/** Step 6: the assertion's ID, once per IdP, until it has expired. */
async function spendAssertion (kit: ProviderKit, request: FastifyRequest, skewMs: number, issuer: string, id: string, expiresAt: number): Promise<void> {
  const key = `saml-assertion:${createHash('sha256').update(`${issuer}\n${id}`).digest('base64url')}`
  const ttlMs = Math.min(MAX_REPLAY_MS, Math.max(1000, expiresAt + skewMs - Date.now()))
  if (!await kit.stateStore.setIfAbsent(key, '1', ttlMs, { client: kit.throttle.clientKey(request) })) {
    throw new HttpError(403, 'SAML response already used', 'this assertion was already used to sign in', ErrorCodes.ALREADY_USED, { reason: 'saml_replay' })
  }
}

/** Every attribute as a list of its string values (complex values left out). */
function attributesOf (profile: Profile): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  const attrs = profile.attributes
  if (attrs === null || typeof attrs !== 'object') return out
  for (const [name, value] of Object.entries(attrs as Record<string, unknown>)) {
    const list = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string')
    if (list.length > 0) out[name] = list
  }
  return out
}

/**
 * node-saml's refusal as this package's: 403 with the reason its message tells (its wording is stable within 5.x;
 * tests hold it). When no subject confirmation is in time, the (unverified) response's own times only tell which
 * way it missed, for the reason; the refusal is node-saml's.
 */
function libraryRefusal (err: unknown, response: XmlNode, skewMs: number): HttpError {
  if (err instanceof HttpError) return err
  const message = err instanceof Error ? err.message : String(err)
  if (/subject confirmation/.test(message)) {
    const early = elements(response, NS.assertion, 'SubjectConfirmationData').some((d) => Date.now() + skewMs < Date.parse(attr(d, 'NotBefore') ?? ''))
    return early
      ? refusedWithCause('the assertion is not valid yet', 'saml_not_yet_valid', err)
      : refusedWithCause('the assertion has expired', 'saml_expired', err)
  }
  const reasons: Array<[RegExp, string, string]> = [
    [/InResponseTo is missing/, 'saml_idp_initiated', 'the response answers no login this service started (IdP-initiated sign-in is off)'],
    [/InResponseTo/, 'saml_in_response_to', 'the response answers another login'],
    [/not yet valid/, 'saml_not_yet_valid', 'the assertion is not valid yet'],
    [/expired|too old/, 'saml_expired', 'the assertion has expired'],
    [/[Aa]udience/, 'saml_audience', 'the assertion is for another service (Audience)'],
    [/decrypt|Encrypted/i, 'saml_encrypted', 'the encrypted assertion cannot be decrypted with this service\'s key'],
    [/[Ss]ignature|signed|reference|Reference|refer to more than one/, 'saml_signature', 'the assertion is not signed by the identity provider\'s key']
  ]
  for (const [re, reason, details] of reasons) if (re.test(message)) return refusedWithCause(details, reason, err)
  return refusedWithCause('the response does not verify', 'saml_invalid', err)
}

function refusedWithCause (details: string, reason: string, cause: unknown): HttpError {
  return new HttpError(403, 'SAML response refused', details, ErrorCodes.CREDENTIALS, { reason, cause })
}
