import { createHash } from 'node:crypto'

/** A value or a promise of it: host callbacks may be sync or async. */
export type MaybePromise<T> = T | Promise<T>

/** The user as it travels in JSON and in the token's `user` claim. */
export interface UserData {
  name: string
  /** `<provider>_<sha1 hex of the provider's user id>` */
  id: string
  /** Full link to the proxied avatar. */
  picture?: string | undefined
  /** Hash of the user's IP, filled by a claims updater. */
  ip?: string | undefined
  email?: string | undefined
  attrs?: Record<string, unknown> | undefined
  role?: string | undefined
}

/** A value that is already a SHA-1 in hex: go-pkgz/auth's `HashID` hands such a value back as it is. */
const SHA1_HEX = /^[0-9a-fA-F]{40}$/

/**
 * `<provider>_<sha1 hex>`: the provider's own id never leaves the server in the clear. A provider id that is
 * already 40 hex digits is kept as it is, as go-pkgz/auth's `HashID` does, so that ids stored by a Go service
 * (and ids hashed once already) come out the same here. (go-pkgz falls back to CRC-64 when its hash fails to
 * write; node:crypto's SHA-1 cannot fail that way, so there is no fallback to mirror.)
 */
export function userId (provider: string, providerUserId: string): string {
  const hashed = SHA1_HEX.test(providerUserId) ? providerUserId : createHash('sha1').update(providerUserId).digest('hex')
  return `${provider}_${hashed}`
}

const ADMIN_ATTR = 'admin'

/**
 * The user placed in `request.user`. Plain data plus typed attribute accessors; serializes to `UserData`.
 */
export class User implements UserData {
  name: string
  id: string
  picture?: string
  ip?: string
  email?: string
  attrs?: Record<string, unknown>
  role?: string

  constructor (data: UserData) {
    this.name = data.name
    this.id = data.id
    if (data.picture !== undefined) this.picture = data.picture
    if (data.ip !== undefined) this.ip = data.ip
    if (data.email !== undefined) this.email = data.email
    if (data.attrs !== undefined) this.attrs = { ...data.attrs }
    if (data.role !== undefined) this.role = data.role
  }

  /** String attribute, `''` when absent or not a string. */
  strAttr (key: string): string {
    const v = this.attrs?.[key]
    return typeof v === 'string' ? v : ''
  }

  /** Boolean attribute, `false` when absent or not a boolean. */
  boolAttr (key: string): boolean {
    return this.attrs?.[key] === true
  }

  /** String-list attribute, `[]` when absent or not a list of strings. */
  listAttr (key: string): string[] {
    const v = this.attrs?.[key]
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? [...v] : []
  }

  setStrAttr (key: string, value: string): this { return this.setAttr(key, value) }
  setBoolAttr (key: string, value: boolean): this { return this.setAttr(key, value) }
  setListAttr (key: string, value: string[]): this { return this.setAttr(key, [...value]) }

  isAdmin (): boolean { return this.boolAttr(ADMIN_ATTR) }
  setAdmin (value: boolean): this { return this.setBoolAttr(ADMIN_ATTR, value) }

  hasRole (roles: readonly string[]): boolean {
    return this.role !== undefined && this.role !== '' && roles.includes(this.role)
  }

  toJSON (): UserData {
    const out: UserData = { name: this.name, id: this.id }
    if (this.picture !== undefined) out.picture = this.picture
    if (this.ip !== undefined) out.ip = this.ip
    if (this.email !== undefined) out.email = this.email
    if (this.attrs !== undefined) out.attrs = { ...this.attrs }
    if (this.role !== undefined) out.role = this.role
    return out
  }

  private setAttr (key: string, value: unknown): this {
    this.attrs = { ...this.attrs, [key]: value }
    return this
  }
}

/**
 * The user of a request as the types show it (`request.user`, `getUser`, `mustGetUser`): a session's user is
 * frozen at runtime and shared by the requests of the session, so the fields are read-only and the setters left
 * out. `new User(user)` gives a copy to change (what an `updateUser` updater gets).
 */
export type ReadonlyUser = Readonly<Omit<User, 'attrs' | 'setStrAttr' | 'setBoolAttr' | 'setListAttr' | 'setAdmin'>> & {
  readonly attrs?: Readonly<Record<string, unknown>> | undefined
}

/** Result of a basic-auth checker: `ok` and, when ok, the user placed in `request.user`. */
export interface BasicAuthResult { ok: boolean; user?: UserData | undefined }
export type BasicAuthChecker = (user: string, passwd: string) => MaybePromise<BasicAuthResult>
