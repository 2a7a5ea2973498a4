/**
 * The default avatar: a symmetric 5x5 grid of cells in one colour, derived from a hash of the user id, so
 * the same user always gets the same picture and different users almost always different ones.
 */
import { createHash } from 'node:crypto'
import { encodePng } from '../../lib/png.js'

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

/**
 * The identicon as a PNG; `size` > 0 scales it to that side (nearest neighbour keeps the edges sharp). Drawn and
 * encoded here, without an image library: the default avatar needs no optional package.
 */
export async function identiconPng (userId: string, size = 0): Promise<Buffer> {
  const { cells, color } = identiconPattern(userId)
  const side = size > 0 ? size : IDENTICON_SIZE
  // The source pixel under the centre of each output pixel.
  const source = (i: number): number => Math.floor((i + 0.5) * IDENTICON_SIZE / side)
  const cellOf = (p: number): number => Math.floor((p - MARGIN) / CELL)
  return encodePng({
    width: side,
    height: side,
    pixel: (x, y) => {
      const row = cellOf(source(y))
      const col = cellOf(source(x))
      return row >= 0 && row < CELLS && col >= 0 && col < CELLS && cells[row]![col]! ? color : BACKGROUND
    }
  })
}

function hslToRgb (h: number, s: number, l: number): [number, number, number] {
  const a = s * Math.min(l, 1 - l)
  const f = (n: number): number => {
    const k = (n + h / 30) % 12
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))))
  }
  return [f(0), f(8), f(4)]
}
