import type { GridFSBucket, MongoClient, Db, GridFSFile } from 'mongodb'
import { requireDriver } from '../lib/optional-driver.js'

// The driver is loaded when a mongodb:// store is opened, not when the package is imported.
const driver = (): typeof import('mongodb') => requireDriver<typeof import('mongodb')>('mongodb', { option: 'GridFsStore', feature: 'a mongodb:// (GridFS) avatar store' })
import { assertAvatarId, contentIdOf, isAvatarId, type AvatarStore } from './types.js'

/** Where a GridFS store keeps its avatars. */
export interface GridFsLocation {
  /** Database of the avatars. */
  db: string
  /** GridFS bucket name (collections `<bucket>.files` and `<bucket>.chunks`). */
  bucket: string
}

/**
 * Avatars in MongoDB GridFS (`mongodb://host:port/db?ava_db=<db>&ava_coll=<bucket>`): one GridFS file per
 * avatar, named by the avatar id, with the content id in its metadata. GridFS deletes only by file `_id`,
 * so a replacement is uploaded first and older files of the same name are deleted by their ids afterwards:
 * a reader always finds at least one complete file.
 */
export class GridFsStore implements AvatarStore {
  private readonly bucket: GridFSBucket
  private readonly db: Db
  private readonly filesCollection: string
  /** `ownsClient`: close the client with the store (true when the store made it from an address). */
  constructor (private readonly client: MongoClient, location: GridFsLocation, private readonly ownsClient = false) {
    this.db = client.db(location.db)
    this.bucket = new (driver().GridFSBucket)(this.db, { bucketName: location.bucket })
    this.filesCollection = `${location.bucket}.files`
  }

  /**
   * Opens a store from an address. `ava_db` defaults to the database in the path, else `gatehouse`;
   * `ava_coll` defaults to `avatars`. Both are removed before the address reaches the driver, which would
   * reject them as unknown options. Server selection gives up after 5 s unless the address says otherwise,
   * so a database that is down fails a login's avatar quickly instead of holding the login for 30 s.
   */
  static fromAddress (address: string): GridFsStore {
    // Not `new URL()`: replica-set addresses (`mongodb://h1:1,h2:2/db`) are not valid WHATWG URLs.
    const q = address.indexOf('?')
    const head = q < 0 ? address : address.slice(0, q)
    const params = new URLSearchParams(q < 0 ? '' : address.slice(q + 1))
    const slash = head.indexOf('/', head.indexOf('://') + 3)
    const pathDb = slash < 0 ? '' : decodeURIComponent(head.slice(slash + 1))
    const db = params.get('ava_db') || pathDb || 'gatehouse'
    const bucket = params.get('ava_coll') || 'avatars'
    params.delete('ava_db')
    params.delete('ava_coll')
    if (!params.has('serverSelectionTimeoutMS')) params.set('serverSelectionTimeoutMS', '5000')
    return new GridFsStore(new (driver().MongoClient)(`${head}?${params.toString()}`), { db, bucket }, true)
  }

  async put (id: string, bytes: Uint8Array): Promise<string> {
    assertAvatarId(id)
    const contentId = contentIdOf(bytes)
    const upload = this.bucket.openUploadStream(id, { metadata: { contentId } })
    await new Promise<void>((resolve, reject) => {
      upload.once('error', reject)
      upload.once('finish', () => resolve())
      upload.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    })
    for (const old of await this.bucket.find({ filename: id, _id: { $ne: upload.id } }).toArray()) {
      await this.deleteQuietly(old)
    }
    return contentId
  }

  async get (id: string, retry = true): Promise<Uint8Array | null> {
    const file = await this.latest(id)
    if (file === null) return null
    const chunks: Buffer[] = []
    try {
      for await (const chunk of this.bucket.openDownloadStream(file._id)) chunks.push(chunk as Buffer)
    } catch (err) {
      // Deleted by a concurrent put between the lookup and the download: read the newer file.
      if (retry && isFileNotFound(err)) return this.get(id, false)
      throw err
    }
    return Buffer.concat(chunks)
  }

  async id (id: string): Promise<string | null> {
    const file = await this.latest(id)
    const contentId: unknown = file?.metadata?.contentId
    return typeof contentId === 'string' ? contentId : null
  }

  async remove (id: string): Promise<void> {
    assertAvatarId(id)
    for (const file of await this.bucket.find({ filename: id }).toArray()) await this.deleteQuietly(file)
  }

  async list (): Promise<string[]> {
    const names = await this.db.collection(this.filesCollection).distinct('filename')
    return names.filter(isAvatarId)
  }

  async close (): Promise<void> {
    if (this.ownsClient) await this.client.close()
  }

  private async latest (id: string): Promise<GridFSFile | null> {
    if (!isAvatarId(id)) return null
    const [file] = await this.bucket.find({ filename: id }, { sort: { uploadDate: -1, _id: -1 }, limit: 1 }).toArray()
    return file ?? null
  }

  private async deleteQuietly (file: GridFSFile): Promise<void> {
    try {
      await this.bucket.delete(file._id)
    } catch (err) {
      if (!isFileNotFound(err)) throw err
    }
  }
}

function isFileNotFound (err: unknown): boolean {
  return /FileNotFound|not found/i.test(String((err as Error)?.message ?? err))
}
