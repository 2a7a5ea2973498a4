/**
 * The avatar proxy the auth core calls at login (`fastify.auth.avatar.save`): picture link or bytes in,
 * stored PNG and its public link out. Any failure short of the store itself ends in an identicon; a store
 * failure ends in no link. Neither fails the login.
 *
 * A picture link is fetched off the login's critical path: the login waits for the picture at most
 * `loginWaitMs` (a fast host's picture is there at once); after that the login goes on with the identicon
 * (or the picture of an earlier login), and the fetch finishes in the background, within its own deadline,
 * and replaces the identicon when it arrives. The avatar's link never changes, so the session's link then
 * serves the picture (browsers revalidate it with its ETag once `maxAge` has passed). Background fetches are
 * bounded in number, one per user at a time, and stopped when the plugin closes.
 *
 * Pictures are decoded and re-encoded by sharp, an optional package. Without it no picture is fetched and every
 * user gets an identicon: a picture is never served as it came.
 */
import { createHash } from 'node:crypto'
import type { AvatarStore } from '../../stores/index.js'
import type { AvatarSaver } from '../core/base/types.js'
import type { Logger } from '../../lib/logging/logger.js'
import { fetchPicture, PictureFetchError, type FetchLimits } from './fetch.js'
import { PictureImageError, toPng } from './image.js'
import { IDENTICON_SIZE, identiconPng } from './identicon.js'
import { hasDriver, installCommand } from '../../lib/optional-driver.js'

export interface ProxyConfig {
  /** `{url}{prefix}`: links are `<base>/<avatar_id>.image`. */
  base: string
  resizeLimit: number
  maxPixels: number
  fetch: FetchLimits
  /** How long a login waits for a picture link to be fetched and stored before going on without it, ms. */
  loginWaitMs: number
  /** Whether pictures can be re-encoded. Default: whether sharp is installed (false stands for its absence in tests). */
  pictures?: boolean | undefined
}

/** Picture fetches running at once; a login beyond this goes on with the identicon and fetches nothing. */
const MAX_FETCHES = 64

/** Stable avatar id of a user: the sha1 hex of the user id, so repeated logins overwrite one entry. */
export function avatarIdOf (userId: string): string {
  return createHash('sha1').update(userId).digest('hex')
}

type Source = { url?: string | undefined; bytes?: Uint8Array | undefined }

/**
 * One picture fetch. Once `late`, a login went on without the picture and the picture's write waits for the
 * identicon's (`placeholder`); once `committed`, the picture is being written and no identicon may follow it.
 */
interface Fetching { late: boolean; committed: boolean; placeholder: Promise<unknown>; work: Promise<boolean> }

export class AvatarProxy implements AvatarSaver {
  /** Picture fetches in flight, by avatar id. */
  private readonly fetching = new Map<string, Fetching>()
  private readonly stopping = new AbortController()
  /** False without sharp: pictures are then neither fetched nor stored. */
  private readonly pictures: boolean
  private toldNoPictures = false
  /** Origins trusted by `trustOrigin`, shared with the fetch limits. */
  private readonly trusted = new Set<string>()
  private readonly limits: FetchLimits

  constructor (readonly store: AvatarStore, private readonly cfg: ProxyConfig, private readonly logger: Logger) {
    this.pictures = cfg.pictures ?? hasDriver('sharp')
    this.limits = { ...cfg.fetch, trustedOrigins: this.trusted }
  }

  /** Pictures from exactly this origin may be fetched at a non-public address (the dev provider's server). */
  trustOrigin (origin: string): void {
    this.trusted.add(new URL(origin).origin)
  }

  /** Public link of a stored avatar. */
  link (avatarId: string): string {
    return `${this.cfg.base}/${avatarId}.image`
  }

  /** Deletes the user's stored avatar (e.g. when the account is deleted). Store errors propagate. */
  async remove (userId: string): Promise<void> {
    await this.store.remove(avatarIdOf(userId))
  }

  /** Stops the picture fetches in flight (their sockets are destroyed) and waits for them; call before closing the store. */
  async close (): Promise<void> {
    this.stopping.abort()
    await Promise.allSettled([...this.fetching.values()].map((f) => f.work))
  }

  async save (userId: string, source: Source = {}): Promise<string | undefined> {
    if (typeof userId !== 'string' || userId === '') return undefined
    const avatarId = avatarIdOf(userId)
    try {
      const url = source?.url
      if (this.pictures && source?.bytes === undefined && typeof url === 'string' && url !== '') return await this.saveFromLink(userId, avatarId, url)
      const png = await this.picture(userId, source ?? {})
      if (png === undefined) return await this.placeholder(userId, avatarId)
      await this.store.put(avatarId, png)
      return this.link(avatarId)
    } catch (err) {
      this.logger.logf('[WARN] avatar: store failed for user %s, login continues without an avatar: %s', userId, describe(err))
      return undefined
    }
  }

  /** A picture link: fetched and stored if that takes at most `loginWaitMs`, else finished in the background. */
  private async saveFromLink (userId: string, avatarId: string, url: string): Promise<string | undefined> {
    // A fetch for this user is running (a login moments ago): it will store the picture.
    const running = this.fetching.get(avatarId)
    if (running !== undefined) return await this.meanwhile(userId, avatarId, running)
    if (this.fetching.size >= MAX_FETCHES || this.stopping.signal.aborted) {
      this.logger.logf('[INFO] avatar: picture of user %s not fetched (%s), using an identicon', userId, this.stopping.signal.aborted ? 'closing' : 'too many fetches running')
      return await this.placeholder(userId, avatarId)
    }
    const state: Fetching = { late: false, committed: false, placeholder: Promise.resolve(), work: Promise.resolve(false) }
    const work = state.work = this.fetchAndStore(userId, avatarId, url, state)
    this.fetching.set(avatarId, state)
    void work.catch(() => {}).finally(() => { this.fetching.delete(avatarId) })

    const done = await settlesWithin(work, this.cfg.loginWaitMs)
    if (done) return (await work) ? this.link(avatarId) : await this.placeholder(userId, avatarId)
    // The picture is being written now: wait for that one store write rather than race it.
    if (state.committed) return (await work) ? this.link(avatarId) : undefined
    const link = await this.meanwhile(userId, avatarId, state)
    work.then(
      (stored) => { if (stored) this.logger.logf('[INFO] avatar: picture of user %s stored after the login', userId) },
      (err: unknown) => { this.logger.logf('[WARN] avatar: store failed for user %s: %s', userId, describe(err)) }
    )
    return link
  }

  /**
   * The link for a login that goes on while the picture is still being fetched. The link must resolve from the
   * moment it is handed out: either the picture is being written (wait for that one write) or the identicon is
   * written first (once per fetch; the picture's write waits for it), unless an avatar is stored already.
   */
  private async meanwhile (userId: string, avatarId: string, state: Fetching): Promise<string | undefined> {
    if (state.committed) return (await state.work.catch(() => false)) ? this.link(avatarId) : undefined
    if (!state.late) {
      state.late = true
      state.placeholder = this.placeholder(userId, avatarId)
    }
    return await state.placeholder as string | undefined
  }

  /** Fetches, decodes and stores the picture; false when there is none to store (the failure is logged). */
  private async fetchAndStore (userId: string, avatarId: string, url: string, state: Fetching): Promise<boolean> {
    const png = await this.picture(userId, { url })
    if (png === undefined) return false
    if (state.late) await state.placeholder.catch(() => {})
    else state.committed = true
    await this.store.put(avatarId, png)
    return true
  }

  /**
   * The link when an avatar is stored already (a picture of an earlier login is kept rather than replaced by
   * an identicon after a passing failure), else the identicon's, written before the link is handed out.
   */
  private async placeholder (userId: string, avatarId: string): Promise<string | undefined> {
    if (await this.store.id(avatarId) !== null) return this.link(avatarId)
    // resizeLimit bounds pictures; it never blows the identicon up.
    const limit = this.cfg.resizeLimit
    await this.store.put(avatarId, await identiconPng(userId, limit > 0 && limit < IDENTICON_SIZE ? limit : 0))
    return this.link(avatarId)
  }

  /** The user's picture as our own PNG, or undefined (no source, or a source that failed: logged). */
  private async picture (userId: string, source: Source): Promise<Buffer | undefined> {
    let where = 'picture bytes'
    if (!this.pictures) return this.withoutPictures(source)
    try {
      let bytes = source.bytes
      if (bytes === undefined) {
        if (typeof source.url !== 'string' || source.url === '') return undefined
        where = `picture from ${hostOf(source.url)}`
        bytes = await fetchPicture(source.url, this.limits, this.stopping.signal)
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

  /** Without sharp there is no picture to store: says once what to install, and the user gets the identicon. */
  private withoutPictures (source: Source): undefined {
    const given = source.bytes !== undefined || (typeof source.url === 'string' && source.url !== '')
    if (given && !this.toldNoPictures) {
      this.toldNoPictures = true
      this.logger.logf('[WARN] avatar: provider pictures need sharp, which is not installed (%s); users get identicons instead', installCommand('sharp'))
    }
    return undefined
  }
}

/** Whether `p` settles (either way) within `ms`; a timer of its own, cleared when it does. */
async function settlesWithin (p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const out = await Promise.race([
    p.then(() => true, () => true),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
  ])
  clearTimeout(timer)
  return out
}

function hostOf (link: string): string {
  try { return new URL(link).host || 'an invalid link' } catch { return 'an invalid link' }
}

function describe (err: unknown): string {
  if (err instanceof PictureFetchError || err instanceof PictureImageError) return err.reason
  return (err as Error)?.message ?? String(err)
}
