import t from 'tap'
import sharp from 'sharp'
import { toPng, sniffFormat } from '../../../plugins/avatar/image.js'
import { identiconPattern, identiconPng, IDENTICON_SIZE } from '../../../plugins/avatar/identicon.js'
import { bombPng, HTML_WITH_SCRIPT, jpeg, png, PNG_SIGNATURE, SVG_WITH_SCRIPT } from '../../helpers/pictures.js'

const limits = { maxPixels: 4096 * 4096, resizeLimit: 0 }

t.test('a JPEG comes out as a PNG of the same size', async (t) => {
  const out = await toPng(await jpeg(200, 100), limits)
  t.same(out.subarray(0, 8), PNG_SIGNATURE)
  const meta = await sharp(out).metadata()
  t.equal(meta.format, 'png')
  t.same([meta.width, meta.height], [200, 100])
})

t.test('resizeLimit bounds the longest side and keeps the aspect ratio; small images are not enlarged', async (t) => {
  const big = await sharp(await toPng(await jpeg(400, 300), { ...limits, resizeLimit: 100 })).metadata()
  t.same([big.width, big.height], [100, 75])
  const small = await sharp(await toPng(await png(50, 40), { ...limits, resizeLimit: 100 })).metadata()
  t.same([small.width, small.height], [50, 40])
})

t.test('WebP and GIF are accepted and re-encoded', async (t) => {
  const base = sharp({ create: { width: 30, height: 20, channels: 3, background: '#336699' } })
  for (const bytes of [await base.clone().webp().toBuffer(), await base.clone().gif().toBuffer()]) {
    const meta = await sharp(await toPng(bytes, limits)).metadata()
    t.same([meta.format, meta.width, meta.height], ['png', 30, 20])
  }
})

t.test('SVG and HTML with script, plain text and empty input are refused before decoding', async (t) => {
  for (const [name, input] of [['svg', SVG_WITH_SCRIPT], ['html', HTML_WITH_SCRIPT], ['text', 'hello'], ['empty', '']] as const) {
    t.equal(sniffFormat(Buffer.from(input)), undefined, name)
    await t.rejects(toPng(Buffer.from(input), limits), { name: 'PictureImageError', reason: /not a raster image/ }, name)
  }
  // An XML prolog or BOM in front changes nothing.
  await t.rejects(toPng(Buffer.from('\ufeff<?xml version="1.0"?>' + SVG_WITH_SCRIPT), limits), /not a raster image/)
})

t.test('a decompression bomb is refused on its header, quickly', async (t) => {
  const bomb = bombPng()
  t.ok(bomb.length < 1000, `the bomb is ${bomb.length} bytes`)
  // `png exceeds …` (the format, no dimensions) is the header check's refusal (libvips reads the header's
  // dimensions when asked for the metadata); a refusal after decoding would name the decoded size or libvips.
  await t.rejects(toPng(bomb, limits), { name: 'PictureImageError', message: /^png exceeds the 16777216-pixel limit$/ }, 'refused on the header, before decoding')
  // Just over a small limit is refused too, just under is decoded.
  await t.rejects(toPng(await png(101, 100), { ...limits, maxPixels: 10_000 }), /exceeds the 10000-pixel limit/)
  t.ok(await toPng(await png(100, 100), { ...limits, maxPixels: 10_000 }))
})

t.test('a truncated image is refused', async (t) => {
  const whole = await jpeg(100, 100)
  await t.rejects(toPng(whole.subarray(0, 200), limits), { name: 'PictureImageError' })
})

t.test('a PNG signature in front of something else is refused', async (t) => {
  await t.rejects(toPng(Buffer.concat([PNG_SIGNATURE, Buffer.from(HTML_WITH_SCRIPT)]), limits), { name: 'PictureImageError' })
})

t.test('identicons are deterministic PNGs, different per user, left-right symmetric', async (t) => {
  const a1 = await identiconPng('github_0123')
  const a2 = await identiconPng('github_0123')
  const b = await identiconPng('github_4567')
  t.same(a1, a2, 'same user, same bytes')
  t.not(a1.equals(b), true, 'different users, different pictures')
  const meta = await sharp(a1).metadata()
  t.same([meta.format, meta.width, meta.height], ['png', IDENTICON_SIZE, IDENTICON_SIZE])
  const { cells } = identiconPattern('github_0123')
  for (const row of cells) t.same(row, [...row].reverse())
  const small = await sharp(await identiconPng('github_0123', 48)).metadata()
  t.same([small.width, small.height], [48, 48])
})

t.test('identicon colours cover the hue range (not one colour for everybody)', async (t) => {
  const colours = new Set<string>()
  for (let i = 0; i < 50; i++) colours.add(identiconPattern(`user_${i}`).color.join(','))
  t.ok(colours.size > 40, `${colours.size} distinct colours for 50 users`)
})
