import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { RootDatabase } from 'lmdb'
import { requireDriver } from '../../lib/optional-driver.js'
import {
  byCreation, checkCredential, checkId, checkUserId, decodeStored, encodeFixed, PasskeyStoreError,
  type AddResult, type PasskeyCredential, type PasskeyStore
} from './types.js'

interface Entry { fixed: string; userId: string; counter: number; lastUsed?: number | undefined }
type Key = [string, string]

/**
 * Passkeys in one embedded lmdb file (`bolt:///path/passkeys.db`; lmdb keeps a `<file>-lock` beside it), so they
 * survive restarts of a single server (several processes of one host may share the file). Credentials live under
 * `['c', id]`, each user's list of ids under `['u', userId]`; every change runs in one write transaction.
 */
export class LmdbPasskeyStore implements PasskeyStore {
  readonly path: string
  private readonly db: RootDatabase<Entry | string[], Key>

  constructor (path: string) {
    if (typeof path !== 'string' || path === '') throw new TypeError('lmdb passkey store: a file path is required')
    this.path = resolve(path)
    mkdirSync(dirname(this.path), { recursive: true })
    // lmdb is loaded when a bolt:// store is opened, not when the package is imported.
    const { open } = requireDriver<typeof import('lmdb')>('lmdb', { option: 'LmdbPasskeyStore', feature: 'a bolt:// passkey store' })
    this.db = open<Entry | string[], Key>({ path: this.path, noSubdir: true })
  }

  async add (credential: PasskeyCredential, limit: number): Promise<AddResult> {
    checkCredential(credential)
    return await this.run(() => this.db.transaction((): AddResult => {
      if (this.db.get(['c', credential.id]) !== undefined) return 'exists'
      const ids = this.ids(credential.userId)
      if (ids.length >= limit) return 'full'
      const entry: Entry = { fixed: encodeFixed(credential), userId: credential.userId, counter: credential.counter }
      if (credential.lastUsed !== undefined) entry.lastUsed = credential.lastUsed
      void this.db.put(['c', credential.id], entry)
      void this.db.put(['u', credential.userId], [...ids, credential.id])
      return 'added'
    }))
  }

  async get (id: string): Promise<PasskeyCredential | undefined> {
    checkId(id)
    const e = this.entry(id)
    return e === undefined ? undefined : decodeStored(e.fixed, e.counter, e.lastUsed)
  }

  async list (userId: string): Promise<PasskeyCredential[]> {
    checkUserId(userId)
    const out: PasskeyCredential[] = []
    for (const id of this.ids(userId)) {
      const c = await this.get(id)
      if (c !== undefined) out.push(c)
    }
    return out.sort(byCreation)
  }

  async use (id: string, expected: number, counter: number, lastUsed: number): Promise<boolean> {
    checkId(id)
    return await this.run(() => this.db.transaction(() => {
      const e = this.entry(id)
      if (e === undefined || e.counter !== expected) return false
      void this.db.put(['c', id], { ...e, counter, lastUsed })
      return true
    }))
  }

  async remove (userId: string, id: string): Promise<boolean> {
    checkUserId(userId)
    checkId(id)
    return await this.run(() => this.db.transaction(() => {
      const e = this.entry(id)
      if (e === undefined || e.userId !== userId) return false
      void this.db.remove(['c', id])
      const rest = this.ids(userId).filter((x) => x !== id)
      if (rest.length === 0) void this.db.remove(['u', userId])
      else void this.db.put(['u', userId], rest)
      return true
    }))
  }

  async close (): Promise<void> {
    await this.db.close()
  }

  private entry (id: string): Entry | undefined {
    const e = this.db.get(['c', id])
    return e === undefined || Array.isArray(e) ? undefined : e
  }

  private ids (userId: string): string[] {
    const v = this.db.get(['u', userId])
    return Array.isArray(v) ? v : []
  }

  private async run<T> (op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      // lmdb's text may name the file: it stays in the cause (logged with the 503), out of the answer.
      throw new PasskeyStoreError('the passkey file (lmdb) failed', { cause: err })
    }
  }
}
