/**
 * The avatar proxy the auth core calls at login (`fastify.auth.avatar.save`): picture link or bytes in,
 * stored PNG and its public link out. Any failure short of the store itself ends in an identicon; a store
 * failure ends in no link. Neither fails the login.
 */
import { createHash } from 'node:crypto'
import type { AvatarStore } from '../../stores/index.js'
import type { AvatarSaver } from '../core/types.js'
import type { Logger } from '../../lib/logger.js'
import { fetchPicture, PictureFetchError, type FetchLimits } from './fetch.js'
import { PictureImageError, toPng } from './image.js'
import { IDENTICON_SIZE, identiconPng } from './identicon.js'

export interface ProxyConfig {
  /** `{url}{prefix}`: links are `<base>/<avatar_id>.image`. */
  base: string
  resizeLimit: number
  maxPixels: number
  fetch: FetchLimits
}

/** Stable avatar id of a user: the sha1 hex of the user id, so repeated logins overwrite one entry. */
export function avatarIdOf (userId: string): string {
  return createHash('sha1').update(userId).digest('hex')
}

export class AvatarProxy implements AvatarSaver {
  constructor (readonly store: AvatarStore, private readonly cfg: ProxyConfig, private readonly logger: Logger) {}

  /** Public link of a stored avatar. */
  link (avatarId: string): string {
    return `${this.cfg.base}/${avatarId}.image`
  }

  /** Deletes the user's stored avatar (e.g. when the account is deleted). Store errors propagate. */
  async remove (userId: string): Promise<void> {
    await this.store.remove(avatarIdOf(userId))
  }

  async save (userId: string, source: { url?: string | undefined; bytes?: Uint8Array | undefined } = {}): Promise<string | undefined> {
    if (typeof userId !== 'string' || userId === '') return undefined
    const avatarId = avatarIdOf(userId)
    const png = await this.picture(userId, source ?? {})
    try {
      if (png === undefined) {
        // Keep a picture stored at an earlier login rather than replace it by an identicon after a
        // passing failure (provider down, timeout).
        if (await this.store.id(avatarId) !== null) return this.link(avatarId)
        // resizeLimit bounds pictures; it never blows the identicon up.
        const limit = this.cfg.resizeLimit
        await this.store.put(avatarId, await identiconPng(userId, limit > 0 && limit < IDENTICON_SIZE ? limit : 0))
      } else {
        await this.store.put(avatarId, png)
      }
      return this.link(avatarId)
    } catch (err) {
      this.logger.logf('[WARN] avatar: store failed for user %s, login continues without an avatar: %s', userId, describe(err))
      return undefined
    }
  }

  /** The user's picture as our own PNG, or undefined (no source, or a source that failed: logged). */
  private async picture (userId: string, source: { url?: string | undefined; bytes?: Uint8Array | undefined }): Promise<Buffer | undefined> {
    let where = 'picture bytes'
    try {
      let bytes = source.bytes
      if (bytes === undefined) {
        if (typeof source.url !== 'string' || source.url === '') return undefined
        where = `picture from ${hostOf(source.url)}`
        bytes = await fetchPicture(source.url, this.cfg.fetch)
      } else if (bytes.length > this.cfg.fetch.maxBytes) {
        throw new PictureFetchError(`${bytes.length} bytes exceed the ${this.cfg.fetch.maxBytes}-byte limit`)
      }
      return await toPng(bytes, { maxPixels: this.cfg.maxPixels, resizeLimit: this.cfg.resizeLimit })
    } catch (err) {
      // Only the host is logged: picture links may carry signatures or tokens in their path or query.
      this.logger.logf('[INFO] avatar: %s refused for user %s, using an identicon: %s', where, userId, describe(err))
      return undefined
    }
  }
}

function hostOf (link: string): string {
  try { return new URL(link).host || 'an invalid link' } catch { return 'an invalid link' }
}

function describe (err: unknown): string {
  if (err instanceof PictureFetchError || err instanceof PictureImageError) return err.reason
  return (err as Error)?.message ?? String(err)
}
