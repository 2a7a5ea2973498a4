/**
 * Which IdP a sign-in is checked against: the one of the options, or a tenant's from the host's own records (the
 * `idp` function), each kept `idpCacheTtl`. Metadata given by address is fetched on first use; when a refresh
 * fails, the last good copy is kept (and tried again a minute later), so an IdP's metadata host going down does
 * not stop sign-ins. Only tenants the host's function answers for are kept (at most `MAX_TENANTS`), so nothing a
 * client sends fills the cache.
 */
import { ErrorCodes, HttpError, OptionsError } from '../../lib/errors.js'
import type { SamlDriver } from './driver.js'
import { fetchMetadata, metadataFailure, MetadataError, readMetadata, type ResolvedIdp } from './metadata.js'
import { certList, checkIdp, type ResolvedSaml, type SamlIdp } from './options.js'

/** Tenants kept at once; the oldest goes first. */
export const MAX_TENANTS = 1000
/** How soon a failed refresh is tried again while the last good copy serves. */
const RETRY_MS = 60_000
/** Tenant names: what a URL, a cookie and a state-store key carry without escaping. */
export const TENANT_RE = /^[A-Za-z0-9._-]{1,64}$/

interface Entry { idp: ResolvedIdp; until: number }

export class IdpDirectory {
  /** Settled IdPs by tenant ('' with one IdP): only what the options or the host's function gave. */
  readonly #entries = new Map<string, Entry>()
  /** Lookups in progress, so that concurrent sign-ins of one tenant ask the host and fetch its metadata once. */
  readonly #pending = new Map<string, Promise<ResolvedIdp>>()

  constructor (
    private readonly o: ResolvedSaml,
    private readonly driver: SamlDriver,
    private readonly warn: (text: string) => void,
    private readonly now: () => number = Date.now
  ) {}

  /** Reads the options' IdP when it is given in full (metadata XML or fields): an OptionsError now, not at the first sign-in. */
  async init (): Promise<void> {
    const idp = this.o.idp
    if (typeof idp === 'function' || 'metadataUrl' in idp) return
    const option = `saml.${this.o.name}.idp`
    try {
      this.#entries.set('', { idp: await this.#settle(idp), until: Infinity })
    } catch (err) {
      throw new OptionsError(option, `is unusable: ${err instanceof HttpError ? err.details ?? err.message : String(err)}`, { cause: err })
    }
  }

  /** Whether the IdP comes from the host's `idp` function (per tenant). */
  get perTenant (): boolean { return typeof this.o.idp === 'function' }

  /**
   * The IdP of `tenant` (undefined with one IdP). 404 for a tenant the host does not know, 502/504 for metadata
   * that cannot be fetched or used (with no good copy kept), 503 when the host's function fails.
   */
  async get (tenant: string | undefined): Promise<ResolvedIdp> {
    const key = tenant ?? ''
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.until > this.now()) return entry.idp
    let pending = this.#pending.get(key)
    if (pending === undefined) {
      pending = this.#refresh(key, tenant, entry).finally(() => { this.#pending.delete(key) })
      this.#pending.set(key, pending)
    }
    return await pending
  }

  async #refresh (key: string, tenant: string | undefined, kept: Entry | undefined): Promise<ResolvedIdp> {
    try {
      const settings = await this.#settings(tenant)
      if (settings === undefined) {
        this.#entries.delete(key)
        throw new HttpError(404, 'unknown tenant', `no identity provider for tenant "${tenant ?? ''}"`, ErrorCodes.NOT_FOUND, { reason: 'saml_unknown_tenant' })
      }
      const idp = await this.#settle(settings)
      this.#keep(key, { idp, until: this.now() + this.o.idpCacheTtlMs })
      return idp
    } catch (err) {
      if (kept === undefined || (err instanceof HttpError && err.statusCode === 404)) throw err
      this.warn(`saml ${this.o.name}: the IdP of ${tenant === undefined ? 'the provider' : `tenant "${tenant}"`} could not be refreshed (${err instanceof HttpError ? err.details ?? err.message : String(err)}); the last good copy is used`)
      this.#keep(key, { idp: kept.idp, until: this.now() + Math.min(RETRY_MS, this.o.idpCacheTtlMs) })
      return kept.idp
    }
  }

  /** The IdP settings: the options' own, or the host's answer for the tenant (checked like an option; 502 when wrong). */
  async #settings (tenant: string | undefined): Promise<SamlIdp | undefined> {
    const idp = this.o.idp
    if (typeof idp !== 'function') return idp
    let answer: SamlIdp | undefined
    try {
      answer = await idp(tenant!)
    } catch (err) {
      throw new HttpError(503, 'unavailable', `the IdP of tenant "${tenant!}" could not be looked up`, ErrorCodes.UNAVAILABLE, { reason: 'saml_tenant_lookup', cause: err })
    }
    if (answer === undefined || answer === null) return undefined
    try {
      checkIdp(`idp("${tenant!}")`, answer)
    } catch (err) {
      throw metadataFailure(`the IdP settings of tenant "${tenant!}" are wrong: ${(err as OptionsError).message}`, err)
    }
    return answer
  }

  /** Settings to a usable IdP: fields as given, metadata read (fetched first when given by address). */
  async #settle (idp: SamlIdp): Promise<ResolvedIdp> {
    if ('entityId' in idp) {
      return { entityId: idp.entityId, ssoUrl: new URL(idp.ssoUrl).href, sloUrl: idp.sloUrl === undefined ? undefined : new URL(idp.sloUrl).href, certs: certList('certs', idp.certs) }
    }
    const signedBy = idp.metadataCert === undefined ? undefined : certList('metadataCert', idp.metadataCert)
    const text = 'metadata' in idp ? idp.metadata : await fetchMetadata(idp.metadataUrl, this.o.timeoutMs)
    // readMetadata throws MetadataError only.
    return await readMetadata(this.driver, text, signedBy, this.o.allowSha1).catch((err: MetadataError) => { throw metadataFailure(`the IdP metadata ${err.message}`) })
  }

  #keep (key: string, entry: Entry): void {
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    if (this.#entries.size > MAX_TENANTS) this.#entries.delete(this.#entries.keys().next().value!)
  }
}
