import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, type BigIntStats } from 'node:fs'
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { assertAvatarId, isAvatarId, type AvatarStore } from './types.js'

/**
 * One PNG file per avatar under `root/<2 hex of sha1(id)>/<id>.png` (`file:///path` or a plain path).
 * The hash prefix spreads avatars over 256 directories, so no directory grows huge.
 * Writes go to a temporary file in the same directory and are renamed into place: a reader sees the old
 * or the new file, never half of one.
 */
export interface FileStoreOptions {
  /**
   * Bytes of recently read avatars kept in memory, each checked against the file's content id (one `stat`)
   * before it is used, so a replaced file is never served stale. 0 disables. Default 8 MiB.
   */
  cacheBytes?: number | undefined
}

export class FileStore implements AvatarStore {
  readonly root: string
  private readonly cacheLimit: number
  /** Insertion order is recency: a hit is moved to the end, the front is dropped first. */
  private readonly cache = new Map<string, { contentId: string; bytes: Buffer }>()
  private cached = 0

  constructor (root: string, opts: FileStoreOptions = {}) {
    if (typeof root !== 'string' || root === '') throw new TypeError('file store: a directory path is required')
    this.root = resolve(root)
    this.cacheLimit = opts.cacheBytes ?? 8 * 1024 * 1024
    mkdirSync(this.root, { recursive: true })
  }

  async put (id: string, bytes: Uint8Array): Promise<string> {
    assertAvatarId(id)
    const path = this.pathOf(id)
    // Same bytes as stored (the same picture at the next login): keep the file, so the ETag stays valid.
    const current = await readOrNull(path)
    if (current !== null && Buffer.compare(current, bytes) === 0) return (await this.id(id)) as string
    const dir = join(path, '..')
    await mkdir(dir, { recursive: true })
    const tmp = join(dir, `.${id}.${randomBytes(6).toString('hex')}.tmp`)
    const fh = await open(tmp, 'wx', 0o644)
    try {
      await fh.writeFile(bytes)
      await fh.datasync()
    } finally {
      await fh.close()
    }
    try {
      await rename(tmp, path)
    } catch (err) {
      await unlink(tmp).catch(() => {})
      throw err
    }
    this.forget(id)
    const contentId = await this.id(id)
    if (contentId === null) throw new Error(`file store: ${path} vanished right after it was written`)
    return contentId
  }

  /** The bytes are shared with the cache: callers must not modify them. */
  async get (id: string): Promise<Uint8Array | null> {
    if (!isAvatarId(id)) return null
    const hit = this.cache.get(id)
    if (hit !== undefined) {
      if (await this.id(id) === hit.contentId) {
        this.cache.delete(id)
        this.cache.set(id, hit)
        return hit.bytes
      }
      this.forget(id)
    }
    let fh
    try {
      fh = await open(this.pathOf(id), 'r')
    } catch (err) {
      if (isNotFound(err)) return null
      throw err
    }
    try {
      // Through one handle: the content id remembered describes exactly the bytes read.
      const [st, bytes] = [await fh.stat({ bigint: true }), await fh.readFile()]
      this.remember(id, contentIdOfStat(st), bytes)
      return bytes
    } finally {
      await fh.close()
    }
  }

  /**
   * Content id from the file's inode, size and modification time: every put renames a new file into place
   * (a new inode), so the id changes whenever the bytes do, without reading or hashing them per request.
   */
  async id (id: string): Promise<string | null> {
    if (!isAvatarId(id)) return null
    try {
      return contentIdOfStat(await stat(this.pathOf(id), { bigint: true }))
    } catch (err) {
      if (isNotFound(err)) return null
      throw err
    }
  }

  async remove (id: string): Promise<void> {
    assertAvatarId(id)
    this.forget(id)
    try {
      await unlink(this.pathOf(id))
    } catch (err) {
      if (!isNotFound(err)) throw err
    }
  }

  async list (): Promise<string[]> {
    const ids: string[] = []
    for (const dir of await readdir(this.root, { withFileTypes: true })) {
      if (!dir.isDirectory() || !/^[0-9a-f]{2}$/.test(dir.name)) continue
      for (const name of await readdir(join(this.root, dir.name))) {
        if (!name.endsWith('.png')) continue
        const id = name.slice(0, -4)
        if (isAvatarId(id) && hashPrefix(id) === dir.name) ids.push(id)
      }
    }
    return ids
  }

  close (): void {
    this.cache.clear()
    this.cached = 0
  }

  private remember (id: string, contentId: string, bytes: Buffer): void {
    if (bytes.length > this.cacheLimit / 4) return
    this.forget(id)
    this.cache.set(id, { contentId, bytes })
    this.cached += bytes.length
    for (const [old, entry] of this.cache) {
      if (this.cached <= this.cacheLimit) break
      this.cache.delete(old)
      this.cached -= entry.bytes.length
    }
  }

  private forget (id: string): void {
    const entry = this.cache.get(id)
    if (entry === undefined) return
    this.cache.delete(id)
    this.cached -= entry.bytes.length
  }

  /** Only called with a valid id, so the result always lies inside `root`. */
  private pathOf (id: string): string {
    return join(this.root, hashPrefix(id), `${id}.png`)
  }
}

function contentIdOfStat (s: BigIntStats): string {
  return `${s.ino.toString(36)}-${s.size.toString(36)}-${s.mtimeNs.toString(36)}`
}

function hashPrefix (id: string): string {
  return createHash('sha1').update(id).digest('hex').slice(0, 2)
}

async function readOrNull (path: string): Promise<Buffer | null> {
  try {
    return await readFile(path)
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
}

function isNotFound (err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT'
}
