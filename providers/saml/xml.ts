/**
 * The XML rules shared by SAML responses and IdP metadata, on the DOM node-saml's parser builds: no document type
 * (no DTD, no entity, internal or external), no SHA-1 signature or digest unless allowed, and small readers of
 * elements by namespace. Signatures themselves are verified by node-saml (xml-crypto), never here.
 */
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import type { SamlDriver } from './driver.js'

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#'
} as const

/** The little of xmldom's DOM read here. */
export interface XmlNode {
  nodeType: number
  localName?: string | null | undefined
  namespaceURI?: string | null | undefined
  textContent: string | null
  childNodes: ArrayLike<XmlNode>
  parentNode: XmlNode | null
  getAttribute?(name: string): string | null
  getElementsByTagNameNS?(ns: string, name: string): ArrayLike<XmlNode>
}
export interface XmlDocument extends XmlNode { documentElement: XmlNode | null }

/** A refusal of the document's content before any check (400; at the ACS the lockout counts it: provider.ts). */
export function malformed (details: string, reason: string): HttpError {
  return new HttpError(400, 'bad SAML message', details, ErrorCodes.BAD_REQUEST, { reason })
}

/**
 * Parses XML with node-saml's parser after refusing any document type declaration: a DTD is where entity
 * expansion and external entities (XXE) live, and no SAML message or metadata needs one.
 */
export async function parseXml (driver: SamlDriver, text: string, what: string): Promise<XmlDocument> {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw malformed(`the ${what} has a document type declaration (DTD), which is refused`, 'saml_dtd')
  let doc: XmlDocument
  try {
    doc = await driver.xml.parseDomFromString(text) as unknown as XmlDocument
  } catch {
    throw malformed(`the ${what} is not well-formed XML`, 'saml_malformed')
  }
  if (doc.documentElement === null) throw malformed(`the ${what} is not well-formed XML`, 'saml_malformed')
  return doc
}

/** Elements below `node` (any depth) of namespace `ns` and local name `name`. */
export function elements (node: XmlNode, ns: string, name: string): XmlNode[] {
  return Array.from(node.getElementsByTagNameNS?.(ns, name) ?? [])
}

/** Direct child elements of `node` of namespace `ns` and local name `name`. */
export function children (node: XmlNode, ns: string, name: string): XmlNode[] {
  return Array.from(node.childNodes).filter((c) => c.nodeType === 1 && c.localName === name && c.namespaceURI === ns)
}

export function attr (node: XmlNode, name: string): string | undefined {
  const v = node.getAttribute?.(name)
  return v === null || v === undefined || v === '' ? undefined : v
}

const SHA1 = /#(rsa-|ecdsa-|dsa-)?sha1$/i

/**
 * Refuses a SHA-1 signature method or digest method anywhere under `node` (collisions are practical for SHA-1),
 * unless `allowSha1`. 403 `GATEHOUSE_CREDENTIALS`, reason `saml_sha1`.
 */
export function refuseSha1 (node: XmlNode, allowSha1: boolean): void {
  if (allowSha1) return
  for (const name of ['SignatureMethod', 'DigestMethod']) {
    for (const el of elements(node, NS.dsig, name)) {
      if (SHA1.test(attr(el, 'Algorithm') ?? '')) throw refused('the signature uses SHA-1, which is refused (allowSha1 accepts it)', 'saml_sha1')
    }
  }
}

/** A checked message refused: 403 `GATEHOUSE_CREDENTIALS` (counted by the lockout) with its audit reason. */
export function refused (details: string, reason: string): HttpError {
  return new HttpError(403, 'SAML response refused', details, ErrorCodes.CREDENTIALS, { reason })
}
