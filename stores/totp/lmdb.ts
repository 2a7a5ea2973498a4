import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { RootDatabase } from 'lmdb'
import { requireDriver } from '../../lib/optional-driver.js'
import { checkEntry, checkHashes, checkUserId, decodeEntry, encodeEntry, TotpStoreError, type TotpEntry, type TotpStore } from './types.js'

type Key = [string, string]

/**
 * TOTP secrets and recovery codes in one embedded lmdb file (`bolt:///path/totp.db`): entries under `['e', userId]`,
 * recovery code hashes under `['r', userId]`, the key check under `['k', '']`; every change is one transaction.
 */
export class LmdbTotpStore implements TotpStore {
  readonly path: string
  private readonly db: RootDatabase<string | string[], Key>

  constructor (path: string) {
    if (typeof path !== 'string' || path === '') throw new TypeError('lmdb totp store: a file path is required')
    this.path = resolve(path)
    mkdirSync(dirname(this.path), { recursive: true })
    const { open } = requireDriver<typeof import('lmdb')>('lmdb', { option: 'LmdbTotpStore', feature: 'a bolt:// totp store' })
    this.db = open<string | string[], Key>({ path: this.path, noSubdir: true })
  }

  async get (userId: string): Promise<TotpEntry | undefined> {
    checkUserId(userId)
    const text = await this.run(async () => this.db.get(['e', userId]))
    return typeof text === 'string' ? decodeEntry(text) : undefined
  }

  async enrol (userId: string, entry: TotpEntry): Promise<boolean> {
    checkUserId(userId)
    checkEntry(entry)
    return await this.run(() => this.db.transaction(() => {
      const text = this.db.get(['e', userId])
      if (typeof text === 'string' && decodeEntry(text).confirmed) return false
      void this.db.put(['e', userId], encodeEntry({ ...entry, confirmed: false }))
      return true
    }))
  }

  async confirm (userId: string, secret: string, recovery: string[]): Promise<boolean> {
    checkUserId(userId)
    checkHashes(recovery)
    return await this.run(() => this.db.transaction(() => {
      const text = this.db.get(['e', userId])
      if (typeof text !== 'string') return false
      const e = decodeEntry(text)
      if (e.confirmed || e.secret !== secret) return false
      void this.db.put(['e', userId], encodeEntry({ ...e, confirmed: true }))
      void this.db.put(['r', userId], [...recovery])
      return true
    }))
  }

  async remove (userId: string): Promise<boolean> {
    checkUserId(userId)
    return await this.run(() => this.db.transaction(() => {
      void this.db.remove(['r', userId])
      if (this.db.get(['e', userId]) === undefined) return false
      void this.db.remove(['e', userId])
      return true
    }))
  }

  async setRecovery (userId: string, hashes: string[]): Promise<void> {
    checkUserId(userId)
    checkHashes(hashes)
    await this.run(() => this.db.put(['r', userId], [...hashes]))
  }

  async useRecovery (userId: string, hash: string): Promise<number> {
    checkUserId(userId)
    return await this.run(() => this.db.transaction(() => {
      const hashes = this.hashes(userId)
      const i = hashes.indexOf(hash)
      if (i < 0) return -1
      hashes.splice(i, 1)
      void this.db.put(['r', userId], hashes)
      return hashes.length
    }))
  }

  async recoveryLeft (userId: string): Promise<number> {
    checkUserId(userId)
    return await this.run(async () => this.hashes(userId).length)
  }

  async keyCheck (value: string): Promise<string> {
    return await this.run(() => this.db.transaction(() => {
      const kept = this.db.get(['k', ''])
      if (typeof kept === 'string') return kept
      void this.db.put(['k', ''], value)
      return value
    }))
  }

  async close (): Promise<void> {
    await this.db.close()
  }

  private hashes (userId: string): string[] {
    const v = this.db.get(['r', userId])
    return Array.isArray(v) ? [...v] : []
  }

  private async run<T> (op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      if (err instanceof TotpStoreError || err instanceof TypeError) throw err
      throw new TotpStoreError('the totp file store failed', { cause: err })
    }
  }
}
