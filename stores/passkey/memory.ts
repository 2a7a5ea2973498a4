import {
  byCreation, checkCredential, checkId, checkUserId, decodeStored, encodeFixed,
  type AddResult, type PasskeyCredential, type PasskeyStore
} from './types.js'

interface Entry { fixed: string; userId: string; counter: number; lastUsed: number | undefined }

/**
 * Passkeys in memory (`memory://`, the default): one process, gone when it ends. Entries are kept in their stored
 * form, so what a caller gets is always a copy.
 */
export class MemoryPasskeyStore implements PasskeyStore {
  private readonly byId = new Map<string, Entry>()
  private readonly byUser = new Map<string, Set<string>>()

  async add (credential: PasskeyCredential, limit: number): Promise<AddResult> {
    checkCredential(credential)
    if (this.byId.has(credential.id)) return 'exists'
    const ids = this.byUser.get(credential.userId) ?? new Set<string>()
    if (ids.size >= limit) return 'full'
    this.byId.set(credential.id, { fixed: encodeFixed(credential), userId: credential.userId, counter: credential.counter, lastUsed: credential.lastUsed })
    ids.add(credential.id)
    this.byUser.set(credential.userId, ids)
    return 'added'
  }

  async get (id: string): Promise<PasskeyCredential | undefined> {
    checkId(id)
    const e = this.byId.get(id)
    return e === undefined ? undefined : decodeStored(e.fixed, e.counter, e.lastUsed)
  }

  async list (userId: string): Promise<PasskeyCredential[]> {
    checkUserId(userId)
    const out: PasskeyCredential[] = []
    for (const id of this.byUser.get(userId) ?? []) {
      const c = await this.get(id)
      if (c !== undefined) out.push(c)
    }
    return out.sort(byCreation)
  }

  async use (id: string, expected: number, counter: number, lastUsed: number): Promise<boolean> {
    checkId(id)
    const e = this.byId.get(id)
    if (e === undefined || e.counter !== expected) return false
    e.counter = counter
    e.lastUsed = lastUsed
    return true
  }

  async remove (userId: string, id: string): Promise<boolean> {
    checkUserId(userId)
    checkId(id)
    const e = this.byId.get(id)
    if (e === undefined || e.userId !== userId) return false
    this.byId.delete(id)
    const ids = this.byUser.get(userId)
    ids?.delete(id)
    if (ids?.size === 0) this.byUser.delete(userId)
    return true
  }

  async close (): Promise<void> {}
}
