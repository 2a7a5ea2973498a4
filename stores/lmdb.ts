import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { RootDatabase } from 'lmdb'
import { requireDriver } from '../lib/optional-driver.js'
import { assertAvatarId, contentIdOf, isAvatarId, type AvatarStore } from './types.js'

/** Bytes of the sha1 content id kept in front of each avatar. */
const HEAD = 20

/**
 * Avatars in one embedded lmdb file (`bolt:///path`; lmdb keeps a `<file>-lock` beside it).
 * Each value is the 20-byte sha1 of the image followed by the image, so `id` and `get` are one lookup each
 * and need no hashing per request.
 */
export class LmdbStore implements AvatarStore {
  readonly path: string
  private readonly db: RootDatabase<Buffer, string>

  constructor (path: string) {
    if (typeof path !== 'string' || path === '') throw new TypeError('lmdb store: a file path is required')
    this.path = resolve(path)
    mkdirSync(dirname(this.path), { recursive: true })
    // noSubdir: a single file even when the name has no dot (lmdb would otherwise make a directory).
    // lmdb is loaded when a bolt:// store is opened, not when the package is imported.
    const { open } = requireDriver<typeof import('lmdb')>('lmdb', { option: 'LmdbStore', feature: 'a bolt:// avatar store' })
    this.db = open<Buffer, string>({ path: this.path, noSubdir: true, encoding: 'binary', compression: false })
  }

  async put (id: string, bytes: Uint8Array): Promise<string> {
    assertAvatarId(id)
    const contentId = contentIdOf(bytes)
    const value = Buffer.allocUnsafe(HEAD + bytes.length)
    value.write(contentId, 0, 'hex')
    value.set(bytes, HEAD)
    await this.db.put(id, value)
    return contentId
  }

  get (id: string): Uint8Array | null {
    if (!isAvatarId(id)) return null
    const value = this.db.getBinary(id)
    return value === undefined || value.length < HEAD ? null : value.subarray(HEAD)
  }

  id (id: string): string | null {
    if (!isAvatarId(id)) return null
    // The fast variant reuses one buffer; the head is copied out as hex before any other read.
    const value = this.db.getBinaryFast(id)
    return value === undefined || value.length < HEAD ? null : value.toString('hex', 0, HEAD)
  }

  async remove (id: string): Promise<void> {
    assertAvatarId(id)
    await this.db.remove(id)
  }

  list (): string[] {
    return Array.from(this.db.getKeys(), String).filter(isAvatarId)
  }

  async close (): Promise<void> {
    await this.db.close()
  }
}
