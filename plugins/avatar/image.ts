/**
 * Turns untrusted picture bytes into a PNG we made ourselves. Only raster formats are accepted, recognised by
 * their magic bytes before any decoder sees them (so SVG, HTML, PDF and the like never reach librsvg or
 * another loader); the header's dimensions are checked against a pixel limit before decoding, and libvips
 * enforces the same limit while decoding; the result is always re-encoded, never the original bytes.
 * Decoding needs sharp (an optional package): without it no picture is turned into a PNG, so none is served.
 */
import type Sharp from 'sharp'
import { requireDriver } from '../../lib/optional-driver.js'

/** sharp, loaded on the first picture (the avatar plugin checks at registration whether it is installed). */
const sharp = (): typeof Sharp => requireDriver<typeof Sharp>('sharp', { option: 'avatar', feature: 'provider pictures' })

export interface ImageLimits {
  /** Most pixels (width × height) a picture may have. */
  maxPixels: number
  /** Longest side after resizing; 0 keeps the size. */
  resizeLimit: number
}

export class PictureImageError extends Error {
  constructor (readonly reason: string) {
    super(reason)
    this.name = 'PictureImageError'
  }
}

type Raster = 'png' | 'jpeg' | 'gif' | 'webp' | 'heif'

/** The raster format the bytes start with, or undefined. */
export function sniffFormat (b: Uint8Array): Raster | undefined {
  const ascii = (from: number, to: number): string => Buffer.from(b.subarray(from, to)).toString('latin1')
  if (b.length >= 8 && b[0] === 0x89 && ascii(1, 4) === 'PNG' && b[4] === 0x0d && b[5] === 0x0a) return 'png'
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg'
  if (b.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) return 'gif'
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp'
  // ISO-BMFF with an AVIF brand (sharp reports these as heif).
  if (b.length >= 12 && ascii(4, 8) === 'ftyp' && ['avif', 'avis'].includes(ascii(8, 12))) return 'heif'
  return undefined
}

/** Decodes, checks, optionally resizes and re-encodes as PNG. Throws PictureImageError with a loggable reason. */
export async function toPng (bytes: Uint8Array, limits: ImageLimits): Promise<Buffer> {
  const format = sniffFormat(bytes)
  if (format === undefined) throw new PictureImageError('not a raster image (png, jpeg, gif, webp or avif)')
  const input = { limitInputPixels: limits.maxPixels, failOn: 'error' as const }
  const meta = await sharp()(bytes, input).metadata().catch((err: Error) => {
    // libvips checks the header's dimensions against limitInputPixels already here.
    if (/pixel limit/i.test(err.message)) throw new PictureImageError(`${format} exceeds the ${limits.maxPixels}-pixel limit`)
    throw new PictureImageError(`undecodable ${format}: ${err.message}`)
  })
  if (meta.format !== format) throw new PictureImageError(`content is ${String(meta.format)} although it starts like ${format}`)
  const { width, height } = meta
  if (width === undefined || height === undefined || width < 1 || height < 1) throw new PictureImageError('image without dimensions')
  if (width * height > limits.maxPixels) throw new PictureImageError(`${width}x${height} exceeds the ${limits.maxPixels}-pixel limit`)
  try {
    // rotate(): apply the EXIF orientation, since the metadata carrying it is not copied into the PNG.
    let img = sharp()(bytes, input).rotate()
    if (limits.resizeLimit > 0) img = img.resize(limits.resizeLimit, limits.resizeLimit, { fit: 'inside', withoutEnlargement: true })
    return await img.png().toBuffer()
  } catch (err) {
    throw new PictureImageError(`cannot decode ${format}: ${(err as Error).message}`)
  }
}
