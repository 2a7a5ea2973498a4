import { createHash } from 'node:crypto'
import { encodePng } from '../lib/png.js'

/**
 * The picture a local OAuth2 server gives its users: a small square in a colour taken from the user
 * name. Deliberately plain: identicons are the avatar proxy's business; this only gives the proxy a real
 * image link to fetch, as a social provider would.
 */
export const PICTURE_SIZE = 32

/** The file name of the user's picture: the SHA-1 of the name, so the link reveals nothing and is stable. */
export function pictureFile (userName: string): string {
  return `${createHash('sha1').update(userName).digest('hex')}.png`
}

/** Whether a path segment can be a picture file name (anything else is answered 404 without work). */
export function isPictureFile (file: string): boolean {
  return /^[0-9a-f]{40}\.png$/.test(file)
}

/** PNG bytes of the picture for a `pictureFile()` name; the colour comes from the hash itself. */
export async function renderPicture (file: string): Promise<Buffer> {
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(file.slice(i, i + 2), 16)) as [number, number, number]
  const colour = [r, g, b] as const
  return encodePng({ width: PICTURE_SIZE, height: PICTURE_SIZE, pixel: () => colour })
}
