/**
 * The SAML provider's options: their types (what the host writes) and their validation at registration (an
 * OptionsError naming the option). Nothing here talks to an identity provider.
 */
import { createPublicKey, X509Certificate } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { Duration } from '../../lib/duration.js'
import { OptionsError } from '../../lib/errors.js'
import { checkKeys, optionBoolean, optionDuration, optionFunction, optionInt, optionName, optionString, optionUrl } from '../../lib/options.js'
import { refuseReservedName } from '../oauth2/builtins.js'
import type { SamlAssertion, SamlMapUser } from './user.js'

/**
 * One identity provider, in one of three ways: its metadata as XML, the address of its metadata (fetched on first
 * use with the provider's deadline and a size limit, kept `idpCacheTtl`, the last good copy kept when a refresh
 * fails), or its entity id, single sign-on URL and signing certificates.
 */
export type SamlIdp = SamlIdpMetadata | SamlIdpMetadataUrl | SamlIdpSettings

/** An identity provider given by its metadata document (`EntityDescriptor` with an `IDPSSODescriptor`). */
export interface SamlIdpMetadata {
  /** The metadata XML. */
  metadata: string
  /** Certificate(s) (PEM) the metadata must be signed with; the signature is not required when absent. */
  metadataCert?: string | string[] | undefined
}

/** An identity provider whose metadata is fetched from an address. */
export interface SamlIdpMetadataUrl {
  /** The http(s) address of the metadata. */
  metadataUrl: string
  /** Certificate(s) (PEM) the metadata must be signed with; the signature is not required when absent. */
  metadataCert?: string | string[] | undefined
}

/** An identity provider given field by field. */
export interface SamlIdpSettings {
  /** The IdP's entity id: the `Issuer` its responses must carry. */
  entityId: string
  /** Where the browser is sent to sign in (HTTP-Redirect binding). */
  ssoUrl: string
  /** Single logout endpoint (HTTP-Redirect binding); single logout is off without it. */
  sloUrl?: string | undefined
  /** The IdP's signing certificate(s), PEM or base64 DER; several during a key rollover. */
  certs: string | string[]
}

/**
 * The IdP of a tenant, from the host's own records (`tenant` is what the `tenant` option read from the login
 * request, or what the signed login state carries at the assertion consumer service); undefined for an unknown
 * tenant (a 404). Its answer is kept `idpCacheTtl` per tenant.
 */
export type SamlIdpResolver = (tenant: string) => SamlIdp | undefined | Promise<SamlIdp | undefined>

/** Options of the SAML 2.0 service-provider plugin (`samlProvider`). */
export interface SamlProviderOptions {
  /** Route name: `{authPrefix}/<name>/login`, `/acs`, `/metadata`, `/logout`, `/slo`. Default `saml`. */
  name?: string | undefined
  /**
   * The identity provider (one for every sign-in), or a function of a tenant answering that tenant's (per-tenant
   * sign-in: the tenant is read from the login request by `tenant`, carried in the signed login state, and the
   * response is checked against that tenant's IdP only). Required.
   */
  idp: SamlIdp | SamlIdpResolver
  /**
   * With an `idp` function: the tenant a login request is for, or undefined when it names none (400). Default: the
   * request's `tenant` field (query or form). A function may read another field, such as the domain of a typed
   * e-mail address. Tenants are 1-64 letters, digits, `.`, `_` or `-`.
   */
  tenant?: ((request: FastifyRequest) => string | undefined | Promise<string | undefined>) | undefined
  /** The SP's entity id (the `Audience` every assertion must name). Default `{url}{authPrefix}/<name>/metadata`. */
  entityId?: string | undefined
  /**
   * The SP's private key (PEM): decrypts encrypted assertions and signs the authentication and logout requests.
   * Give `cert` with it.
   */
  privateKey?: string | undefined
  /** The SP's certificate (PEM) for `privateKey`, published in the metadata for signing and encryption. */
  cert?: string | undefined
  /** Accept responses the SP did not ask for (IdP-initiated sign-in, no `InResponseTo`). Default false. */
  allowIdpInitiated?: boolean | undefined
  /** Accept SHA-1 signatures and digests (an old IdP). Default false: refused. */
  allowSha1?: boolean | undefined
  /** Clock skew allowed on `NotBefore` / `NotOnOrAfter`. Default `'60s'`. */
  clockSkew?: Duration | undefined
  /** Time the user may spend at the IdP (the signed login state's lifetime). Default `'10m'`. */
  loginTtl?: Duration | undefined
  /** Largest SAML response read, in bytes of XML. Default 256 KiB. */
  maxResponseBytes?: number | undefined
  /** Deadline of a metadata fetch. Default `'10s'`. */
  timeout?: Duration | undefined
  /** How long a tenant's IdP settings and fetched metadata are kept. Default `'1h'`. */
  idpCacheTtl?: Duration | undefined
  /** The `NameIDPolicy` format asked for (e.g. `urn:oasis:names:tc:SAML:2.0:nameid-format:persistent`). Default: none, the IdP chooses. */
  nameIdFormat?: string | undefined
  /**
   * Turns the checked assertion into a user; throwing refuses the sign-in (502). Its second argument is the default
   * mapping's answer, to keep or change: the NameID is the id, `displayName`/`cn` the name, `mail`/`email` the
   * e-mail, `groups`/`memberOf` in `attrs.groups`. Default: that answer.
   */
  mapUser?: SamlMapUser | undefined
}

/** The options, checked and with their defaults. */
export interface ResolvedSaml {
  name: string
  idp: SamlIdp | SamlIdpResolver
  tenant: ((request: FastifyRequest) => string | undefined | Promise<string | undefined>) | undefined
  entityId: string
  acsUrl: string
  sloUrl: string
  privateKey: string | undefined
  cert: string | undefined
  allowIdpInitiated: boolean
  allowSha1: boolean
  clockSkewMs: number
  loginTtlMs: number
  maxResponseBytes: number
  timeoutMs: number
  idpCacheTtlMs: number
  nameIdFormat: string | undefined
  mapUser: SamlMapUser | undefined
}

const KEYS = ['name', 'idp', 'tenant', 'entityId', 'privateKey', 'cert', 'allowIdpInitiated', 'allowSha1', 'clockSkew', 'loginTtl',
  'maxResponseBytes', 'timeout', 'idpCacheTtl', 'nameIdFormat', 'mapUser'] as const

/** Checks the options (OptionsError naming the option); `base` is `{url}{authPrefix}`. */
export function resolveOptions (opts: SamlProviderOptions, base: string): ResolvedSaml {
  const o = checkKeys(opts, KEYS, 'saml')
  const name = optionName('saml.name', o.name, 'saml')
  refuseReservedName('saml.name', name)
  const label = `saml.${name}`
  const idp = o.idp
  if (typeof idp !== 'function') checkIdp(`${label}.idp`, idp)
  const tenant = optionFunction<ResolvedSaml['tenant']>(`${label}.tenant`, o.tenant)
  if (tenant !== undefined && typeof idp !== 'function') throw new OptionsError(`${label}.tenant`, 'needs an idp function (tenant) => its IdP')
  const privateKey = optionString(`${label}.privateKey`, o.privateKey)
  const cert = optionString(`${label}.cert`, o.cert)
  if ((privateKey === undefined) !== (cert === undefined)) throw new OptionsError(`${label}.${privateKey === undefined ? 'privateKey' : 'cert'}`, 'is required with the other of privateKey and cert')
  if (privateKey !== undefined) checkPem(`${label}.privateKey`, privateKey, 'key')
  if (cert !== undefined) checkPem(`${label}.cert`, cert, 'cert')
  const entityId = optionString(`${label}.entityId`, o.entityId) ?? `${base}/${name}/metadata`
  const maxResponseBytes = optionInt(`${label}.maxResponseBytes`, o.maxResponseBytes, 256 * 1024, 1024)
  if (maxResponseBytes > 8 * 1024 * 1024) throw new OptionsError(`${label}.maxResponseBytes`, 'must be at most 8 MiB')
  return {
    name,
    idp: idp as SamlIdp | SamlIdpResolver,
    tenant,
    entityId,
    acsUrl: `${base}/${name}/acs`,
    sloUrl: `${base}/${name}/slo`,
    privateKey,
    cert,
    allowIdpInitiated: optionBoolean(`${label}.allowIdpInitiated`, o.allowIdpInitiated, false),
    allowSha1: optionBoolean(`${label}.allowSha1`, o.allowSha1, false),
    clockSkewMs: o.clockSkew === 0 ? 0 : optionDuration(`${label}.clockSkew`, o.clockSkew, 60_000),
    loginTtlMs: optionDuration(`${label}.loginTtl`, o.loginTtl, 10 * 60_000),
    maxResponseBytes,
    timeoutMs: optionDuration(`${label}.timeout`, o.timeout, 10_000),
    idpCacheTtlMs: optionDuration(`${label}.idpCacheTtl`, o.idpCacheTtl, 60 * 60_000),
    nameIdFormat: optionString(`${label}.nameIdFormat`, o.nameIdFormat),
    mapUser: optionFunction<SamlMapUser>(`${label}.mapUser`, o.mapUser)
  }
}

/**
 * Checks one IdP's settings (its shape; metadata is parsed where it is used). OptionsError naming `option` at
 * registration; a tenant's IdP is checked the same way when the resolver answers it (then a 502).
 */
export function checkIdp (option: string, idp: unknown): asserts idp is SamlIdp {
  if (idp === null || typeof idp !== 'object' || Array.isArray(idp)) {
    throw new OptionsError(option, 'is required: { metadata } or { metadataUrl } or { entityId, ssoUrl, certs }, or a function (tenant) => one of them')
  }
  const i = idp as Record<string, unknown>
  if ('metadata' in i || 'metadataUrl' in i) {
    const o = checkKeys(i, 'metadata' in i ? ['metadata', 'metadataCert'] : ['metadataUrl', 'metadataCert'], option)
    if ('metadata' in o) optionString(`${option}.metadata`, o.metadata)
    else optionUrl(`${option}.metadataUrl`, o.metadataUrl)
    if (o.metadataCert !== undefined) certList(`${option}.metadataCert`, o.metadataCert)
    return
  }
  const o = checkKeys(i, ['entityId', 'ssoUrl', 'sloUrl', 'certs'], option)
  if (optionString(`${option}.entityId`, o.entityId) === undefined) throw new OptionsError(`${option}.entityId`, 'is required')
  optionUrl(`${option}.ssoUrl`, o.ssoUrl)
  if (o.sloUrl !== undefined) optionUrl(`${option}.sloUrl`, o.sloUrl)
  certList(`${option}.certs`, o.certs)
}

/** Certificates as PEM strings, each parsed once here so that a typo fails now, not at the first sign-in. */
export function certList (option: string, value: unknown): string[] {
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || list.length === 0 || !list.every((c) => typeof c === 'string' && c.trim() !== '')) {
    throw new OptionsError(option, 'must be a certificate (PEM or base64) or a non-empty list of them')
  }
  return list.map((c: string) => {
    const pem = toPem(c)
    checkPem(option, pem, 'cert')
    return pem
  })
}

/** A certificate as PEM: base64 DER (as metadata and consoles show it) gets its armour. */
export function toPem (cert: string): string {
  if (cert.includes('-----BEGIN')) return cert.trim()
  const body = cert.replace(/\s+/g, '')
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----`
}

function checkPem (option: string, pem: string, kind: 'cert' | 'key'): void {
  try {
    if (kind === 'cert') void new X509Certificate(pem)
    else createPublicKey(pem)
  } catch {
    throw new OptionsError(option, kind === 'cert' ? 'is not a readable X.509 certificate' : 'is not a readable private key (PEM)')
  }
}

export type { SamlAssertion }
