/**
 * The default avatar: a symmetric 5x5 grid of cells in one colour, derived from a hash of the user id, so
 * the same user always gets the same picture and different users almost always different ones.
 */
import { createHash } from 'node:crypto'
import { sharpLazy } from '../../lib/lazy.js'

const CELLS = 5
const CELL = 20
const MARGIN = 10
/** Side of an identicon before any resize: 120 px. */
export const IDENTICON_SIZE = CELLS * CELL + 2 * MARGIN
const BACKGROUND = [240, 240, 240] as const

/** Which cells are filled and in what colour; the left half is mirrored onto the right. */
export function identiconPattern (userId: string): { cells: boolean[][]; color: [number, number, number] } {
  const h = createHash('sha256').update(userId).digest()
  const cells: boolean[][] = []
  for (let row = 0; row < CELLS; row++) {
    const line: boolean[] = []
    for (let col = 0; col < CELLS; col++) {
      const src = col < 3 ? col : CELLS - 1 - col
      line.push(((h[row * 3 + src] as number) & 1) === 1)
    }
    cells.push(line)
  }
  const hue = (((h[16] as number) << 8) | (h[17] as number)) % 360
  return { cells, color: hslToRgb(hue, 0.45 + (h[18] as number) / 255 * 0.2, 0.45 + (h[19] as number) / 255 * 0.15) }
}

/** The identicon as a PNG; `size` > 0 scales it to that side (nearest neighbour keeps the edges sharp). */
export async function identiconPng (userId: string, size = 0): Promise<Buffer> {
  const { cells, color } = identiconPattern(userId)
  const pixels = Buffer.alloc(IDENTICON_SIZE * IDENTICON_SIZE * 3)
  for (let y = 0; y < IDENTICON_SIZE; y++) {
    for (let x = 0; x < IDENTICON_SIZE; x++) {
      const row = Math.floor((y - MARGIN) / CELL)
      const col = Math.floor((x - MARGIN) / CELL)
      const on = row >= 0 && row < CELLS && col >= 0 && col < CELLS && cells[row]![col]!
      pixels.set(on ? color : BACKGROUND, (y * IDENTICON_SIZE + x) * 3)
    }
  }
  let img = sharpLazy()(pixels, { raw: { width: IDENTICON_SIZE, height: IDENTICON_SIZE, channels: 3 } })
  if (size > 0 && size !== IDENTICON_SIZE) img = img.resize(size, size, { kernel: 'nearest' })
  return img.png().toBuffer()
}

function hslToRgb (h: number, s: number, l: number): [number, number, number] {
  const a = s * Math.min(l, 1 - l)
  const f = (n: number): number => {
    const k = (n + h / 30) % 12
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))))
  }
  return [f(0), f(8), f(4)]
}
