/**
 * From a checked assertion to the session's user: the host's `mapUser` or `mapSamlUser`, then the id hashed per
 * provider (and per tenant: two companies' IdPs may both have an `alice`), and what single logout needs later.
 */
import { userId, type UserData } from '../../lib/user.js'
import { HttpError, ErrorCodes } from '../../lib/errors.js'

/** What a checked (signed, for this SP, in time, answering this login) assertion says. */
export interface SamlAssertion {
  /** The subject's NameID. */
  nameId: string
  /** Its format (`urn:oasis:names:tc:SAML:2.0:nameid-format:persistent`, …), when given. */
  nameIdFormat: string | undefined
  /** The IdP's session (`AuthnStatement/@SessionIndex`), for single logout. */
  sessionIndex: string | undefined
  /** The IdP's entity id (the checked `Issuer`). */
  issuer: string
  /** The tenant of a per-tenant sign-in; undefined with one IdP. */
  tenant: string | undefined
  /** Every attribute by its `Name`, each a list of its string values. */
  attributes: Record<string, string[]>
}

/** What a mapping answers; `id` is the IdP's id of the user, hashed into the session's user id. */
export interface SamlMappedUser {
  id: string
  /** Display name; the id when empty. */
  name?: string | undefined
  email?: string | undefined
  attrs?: Record<string, unknown> | undefined
  role?: string | undefined
}

/**
 * Turns the checked assertion into a user (throw to refuse the sign-in: 502). `mapped` is what the default mapping
 * made of it (`mapSamlUser`), to keep or change: `(a, mapped) => ({ ...mapped, role: … })`.
 */
export type SamlMapUser = (assertion: SamlAssertion, mapped: SamlMappedUser) => SamlMappedUser | Promise<SamlMappedUser>

/** Attribute names each field is read from, first present wins: plain names, OIDs, and the WS-Federation claim URIs (Entra ID, ADFS). */
const NAME_ATTRS = ['displayName', 'urn:oid:2.16.840.1.113730.3.1.241', 'http://schemas.microsoft.com/identity/claims/displayname', 'cn', 'urn:oid:2.5.4.3', 'name', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name']
const EMAIL_ATTRS = ['mail', 'email', 'urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress']
const GROUP_ATTRS = ['groups', 'memberOf', 'urn:oid:1.3.6.1.4.1.5923.1.5.1.1', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups']

function first (attrs: Record<string, string[]>, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = attrs[n]?.find((s) => s.trim() !== '')
    if (v !== undefined) return v.trim()
  }
  return undefined
}

/**
 * The default mapping: the NameID is the id; the name is `displayName` (or `cn`, `name`, their OIDs and claim
 * URIs), else the NameID; `mail`/`email` the e-mail; `groups`/`memberOf` go to `attrs.groups` (a string list), for
 * a claims updater to turn into a role.
 */
export function mapSamlUser (a: SamlAssertion): SamlMappedUser {
  const user: SamlMappedUser = { id: a.nameId, name: first(a.attributes, NAME_ATTRS) ?? a.nameId }
  const email = first(a.attributes, EMAIL_ATTRS)
  if (email !== undefined) user.email = email
  for (const n of GROUP_ATTRS) {
    const groups = a.attributes[n]?.filter((g) => g !== '')
    if (groups !== undefined && groups.length > 0) {
      user.attrs = { groups }
      break
    }
  }
  return user
}

/** What single logout needs of the session (`attrs.saml`): whom to sign out at which IdP. */
export interface SamlSessionAttrs {
  nameId: string
  nameIdFormat?: string | undefined
  sessionIndex?: string | undefined
  tenant?: string | undefined
}

/** The session's user: the mapping's answer (the host's `mapUser`, else the default) with its id hashed per provider and tenant, and `attrs.saml`. */
export async function samlUser (provider: string, map: SamlMapUser | undefined, a: SamlAssertion): Promise<UserData> {
  let mapped: SamlMappedUser
  try {
    mapped = map === undefined ? mapSamlUser(a) : await map(a, mapSamlUser(a))
  } catch (err) {
    throw new HttpError(502, 'SAML user mapping failed', (err as Error)?.message?.slice(0, 200) ?? 'mapUser threw', ErrorCodes.UPSTREAM, { reason: 'saml_mapping', cause: err })
  }
  const raw = mapped?.id
  if (typeof raw !== 'string' || raw === '') throw new HttpError(502, 'SAML user mapping failed', 'no user id', ErrorCodes.UPSTREAM, { reason: 'saml_mapping' })
  const id = userId(provider, a.tenant === undefined ? raw : `${a.tenant}/${raw}`)
  const name = typeof mapped.name === 'string' && mapped.name.trim() !== '' ? mapped.name.trim().slice(0, 256) : raw.slice(0, 256)
  const saml: SamlSessionAttrs = { nameId: a.nameId }
  if (a.nameIdFormat !== undefined) saml.nameIdFormat = a.nameIdFormat
  if (a.sessionIndex !== undefined) saml.sessionIndex = a.sessionIndex
  if (a.tenant !== undefined) saml.tenant = a.tenant
  const user: UserData = { id, name, attrs: { ...(mapped.attrs !== null && typeof mapped.attrs === 'object' ? mapped.attrs : {}), saml } }
  if (typeof mapped.email === 'string' && mapped.email !== '') user.email = mapped.email
  if (typeof mapped.role === 'string' && mapped.role !== '') user.role = mapped.role
  return user
}

/** `attrs.saml` of a session's user, when it is one this provider signed in. */
export function sessionAttrs (attrs: Record<string, unknown> | undefined): SamlSessionAttrs | undefined {
  const s = attrs?.saml
  if (s === null || typeof s !== 'object') return undefined
  const v = s as Record<string, unknown>
  if (typeof v.nameId !== 'string' || v.nameId === '') return undefined
  const str = (x: unknown): string | undefined => typeof x === 'string' && x !== '' ? x : undefined
  return { nameId: v.nameId, nameIdFormat: str(v.nameIdFormat), sessionIndex: str(v.sessionIndex), tenant: str(v.tenant) }
}
