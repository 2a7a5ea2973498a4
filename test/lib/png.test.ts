/** The package's own PNG encoder (identicons, the development servers' pictures), checked by decoding with sharp. */
import t from 'tap'
import sharp from 'sharp'
import { encodePng } from '../../lib/png.js'

t.test('every pixel comes back as drawn', async (t) => {
  const colour = (x: number, y: number): [number, number, number] => [x * 80, y * 120, 255 - x * 40 - y]
  const png = encodePng({ width: 4, height: 3, pixel: colour })
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true })
  t.match(info, { format: 'raw', width: 4, height: 3, channels: 3 })
  const expected = Buffer.alloc(4 * 3 * 3)
  for (let y = 0; y < 3; y++) for (let x = 0; x < 4; x++) expected.set(colour(x, y), (y * 4 + x) * 3)
  t.same(data, expected)
  t.equal((await sharp(png, { failOn: 'warning' }).metadata()).format, 'png', 'no warning from libpng (CRCs, zlib stream)')
})

t.test('a side that is not a positive integer is refused', async (t) => {
  for (const [width, height] of [[0, 1], [1, 1.5], [-2, 2]]) {
    t.throws(() => encodePng({ width: width!, height: height!, pixel: () => [0, 0, 0] }), RangeError, `${width}x${height}`)
  }
})
