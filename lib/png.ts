/**
 * A PNG encoder for the pictures the package draws itself (identicons, the development servers' user
 * pictures): 8-bit RGB, no interlace, every row unfiltered, one zlib stream. Enough for flat colours, which
 * deflate compresses well, and it needs no image library.
 */
import { requireLazy } from './lazy.js'

// node:zlib is loaded when the first picture is drawn, not when the package is imported.
const zlib = (): typeof import('node:zlib') => requireLazy<typeof import('node:zlib')>('node:zlib')

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const RGB = 3

/** A picture as rows of RGB pixels: `pixel(x, y)` is asked once per pixel, row by row. */
export interface RgbPicture {
  width: number
  height: number
  pixel: (x: number, y: number) => readonly [number, number, number]
}

/** The PNG bytes of the picture. */
export function encodePng ({ width, height, pixel }: RgbPicture): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) throw new RangeError('a PNG needs a positive integer width and height')
  const stride = 1 + width * RGB
  const raw = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    // Each row starts with its filter type; 0 (none) leaves the bytes as they are.
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), y * stride + 1 + x * RGB)
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bits per sample
  header[9] = 2 // colour type: truecolour (RGB)
  // Bytes 10-12 stay 0: deflate compression, adaptive filtering, no interlace.
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', zlib().deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

/** One chunk: length, type, data, and the CRC-32 of type and data. */
function chunk (type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, 'latin1')
  data.copy(out, 8)
  out.writeUInt32BE(zlib().crc32(out.subarray(4, 8 + data.length)), 8 + data.length)
  return out
}
