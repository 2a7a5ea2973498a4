import { checkEntry, checkHashes, checkUserId, decodeEntry, encodeEntry, type TotpEntry, type TotpStore } from './types.js'

/** TOTP secrets and recovery codes in memory (`memory://`, the default): one process, gone when it ends. */
export class MemoryTotpStore implements TotpStore {
  private readonly entries = new Map<string, string>()
  private readonly recovery = new Map<string, Set<string>>()
  private check: string | undefined

  async get (userId: string): Promise<TotpEntry | undefined> {
    checkUserId(userId)
    const text = this.entries.get(userId)
    return text === undefined ? undefined : decodeEntry(text)
  }

  async enrol (userId: string, entry: TotpEntry): Promise<boolean> {
    checkUserId(userId)
    checkEntry(entry)
    if ((await this.get(userId))?.confirmed === true) return false
    this.entries.set(userId, encodeEntry({ ...entry, confirmed: false }))
    return true
  }

  async confirm (userId: string, secret: string, recovery: string[]): Promise<boolean> {
    checkHashes(recovery)
    const e = await this.get(userId)
    if (e === undefined || e.confirmed || e.secret !== secret) return false
    this.entries.set(userId, encodeEntry({ ...e, confirmed: true }))
    this.recovery.set(userId, new Set(recovery))
    return true
  }

  async remove (userId: string): Promise<boolean> {
    checkUserId(userId)
    this.recovery.delete(userId)
    return this.entries.delete(userId)
  }

  async setRecovery (userId: string, hashes: string[]): Promise<void> {
    checkUserId(userId)
    checkHashes(hashes)
    this.recovery.set(userId, new Set(hashes))
  }

  async useRecovery (userId: string, hash: string): Promise<number> {
    checkUserId(userId)
    const set = this.recovery.get(userId)
    if (set === undefined || !set.delete(hash)) return -1
    return set.size
  }

  async recoveryLeft (userId: string): Promise<number> {
    checkUserId(userId)
    return this.recovery.get(userId)?.size ?? 0
  }

  async keyCheck (value: string): Promise<string> {
    this.check ??= value
    return this.check
  }

  async close (): Promise<void> {}
}
