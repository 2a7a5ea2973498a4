/**
 * An identity provider's metadata, read: its entity id, single sign-on and single logout endpoints (HTTP-Redirect
 * binding) and signing certificates, from an `EntityDescriptor` whose signature is checked first when the host
 * requires one (`metadataCert`, verified by node-saml's xml-crypto). And the fetch of a metadata address with the
 * package's outbound call: a deadline, a size cap, no redirect followed.
 */
import { HttpError, ErrorCodes } from '../../lib/errors.js'
import { Deadline, outboundRequest, OutboundError } from '../../lib/http/request.js'
import type { SamlDriver } from './driver.js'
import { attr, children, NS, parseXml, refuseSha1, type XmlNode } from './xml.js'
import { toPem } from './options.js'

/** An IdP as the provider uses it. */
export interface ResolvedIdp {
  entityId: string
  ssoUrl: string
  sloUrl: string | undefined
  /** Signing certificates, PEM. */
  certs: string[]
}

/** Largest metadata document read (one IdP's metadata is a few kilobytes; a federation's aggregate is not one IdP). */
export const MAX_METADATA_BYTES = 1 << 20

const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'

/** Metadata that cannot be used; the caller says where it came from (an option, a fetched address). */
export class MetadataError extends Error {}

/** Reads an IdP's metadata; with `signedBy`, only what a signature by one of those certificates covers. */
export async function readMetadata (driver: SamlDriver, text: string, signedBy: string[] | undefined, allowSha1: boolean): Promise<ResolvedIdp> {
  let doc
  try {
    doc = await parseXml(driver, text, 'metadata')
  } catch (err) {
    throw new MetadataError((err as HttpError).details ?? 'not XML')
  }
  let root = doc.documentElement!
  if (signedBy !== undefined) {
    let verified: string | null = null
    try {
      verified = driver.xml.getVerifiedXml(text, root as never, signedBy)
    } catch {}
    if (verified === null) throw new MetadataError('is not signed by the metadata certificate (metadataCert)')
    try {
      refuseSha1(root, allowSha1)
    } catch (err) {
      throw new MetadataError((err as HttpError).details ?? 'SHA-1')
    }
    root = (await parseXml(driver, verified, 'metadata')).documentElement!
  }
  if (root.localName !== 'EntityDescriptor' || root.namespaceURI !== NS.metadata) throw new MetadataError('is not a SAML 2.0 EntityDescriptor')
  const entityId = attr(root, 'entityID')
  if (entityId === undefined) throw new MetadataError('has no entityID')
  const idp = children(root, NS.metadata, 'IDPSSODescriptor')[0]
  if (idp === undefined) throw new MetadataError('has no IDPSSODescriptor')
  const ssoUrl = endpoint(idp, 'SingleSignOnService')
  if (ssoUrl === undefined) throw new MetadataError('has no SingleSignOnService with the HTTP-Redirect binding')
  const certs = children(idp, NS.metadata, 'KeyDescriptor')
    .filter((k) => attr(k, 'use') === undefined || attr(k, 'use') === 'signing')
    .flatMap((k) => x509Certificates(k))
  if (certs.length === 0) throw new MetadataError('has no signing certificate (KeyDescriptor use="signing")')
  return { entityId, ssoUrl, sloUrl: endpoint(idp, 'SingleLogoutService'), certs }
}

function endpoint (idp: XmlNode, name: string): string | undefined {
  const el = children(idp, NS.metadata, name).find((e) => attr(e, 'Binding') === REDIRECT)
  const location = el === undefined ? undefined : attr(el, 'Location')
  if (location === undefined) return undefined
  try {
    const u = new URL(location)
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : undefined
  } catch {
    return undefined
  }
}

function x509Certificates (key: XmlNode): string[] {
  const out: string[] = []
  for (const info of children(key, NS.dsig, 'KeyInfo')) {
    for (const data of children(info, NS.dsig, 'X509Data')) {
      for (const c of children(data, NS.dsig, 'X509Certificate')) {
        const text = (c.textContent ?? '').replace(/\s+/g, '')
        if (text !== '') out.push(toPem(text))
      }
    }
  }
  return out
}

/**
 * Fetches a metadata document: 502 `GATEHOUSE_UPSTREAM` when it cannot be reached, answers other than 200 or more
 * than `MAX_METADATA_BYTES`; 504 when it does not answer within `timeoutMs`.
 */
export async function fetchMetadata (url: string, timeoutMs: number): Promise<string> {
  const deadline = new Deadline(timeoutMs)
  try {
    const ans = await outboundRequest(new URL(url), { deadline, maxBytes: MAX_METADATA_BYTES, span: 'gatehouse.saml.metadata', headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } })
    if (ans.status !== 200) throw metadataFailure(`the metadata address answered ${ans.status}`)
    return ans.body.toString('utf8')
  } catch (err) {
    if (err instanceof HttpError) throw err
    const reason = err instanceof OutboundError ? err.reason : 'unreachable'
    if (reason === 'timeout') throw new HttpError(504, 'IdP metadata did not arrive in time', `no answer within ${timeoutMs} ms`, ErrorCodes.UPSTREAM_TIMEOUT, { reason: 'saml_metadata', cause: err })
    throw metadataFailure(reason === 'too-large' ? `more than ${MAX_METADATA_BYTES} bytes` : 'the metadata address could not be reached', err)
  } finally {
    deadline.clear()
  }
}

/** 502 for the IdP's metadata (unreachable, unusable): nothing the browser sent is at fault. */
export function metadataFailure (details: string, cause?: unknown): HttpError {
  return new HttpError(502, 'IdP metadata unusable', details, ErrorCodes.UPSTREAM, { reason: 'saml_metadata', cause })
}
