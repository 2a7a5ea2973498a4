/**
 * Avatars when sharp is not installed (the proxy told so with `pictures: false`, as it tells itself when sharp
 * does not resolve): no picture is fetched or stored, every user gets the identicon, and the log says once what
 * to install. The real thing, sharp absent from node_modules, is in test/package/scratch-app.test.ts.
 */
import t from 'tap'
import { AvatarProxy, avatarIdOf, identiconPng } from '../../../plugins/avatar/plugin.js'
import { resolveAvatarOptions } from '../../../plugins/avatar/options.js'
import { MemoryStore } from '../../../stores/memory.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { jpeg, startPictureServer } from '../../helpers/pictures.js'

function proxyWithout (lines: string[]): AvatarProxy {
  const o = resolveAvatarOptions({ fetch: { allowPrivate: true } })
  return new AvatarProxy(new MemoryStore(), {
    base: 'http://gatehouse.test/avatar', resizeLimit: 0, maxPixels: o.maxPixels, fetch: o.fetch, loginWaitMs: 1000, pictures: false
  }, funcLogger((line) => lines.push(line)))
}

t.test('without sharp: a picture link is not fetched, the identicon is stored, the log names the npm i line once', async (t) => {
  const pictures = await startPictureServer()
  t.teardown(() => pictures.close())
  const lines: string[] = []
  const proxy = proxyWithout(lines)
  t.teardown(() => proxy.close())
  for (const user of ['github_a', 'github_b']) {
    const link = await proxy.save(user, { url: `${pictures.base}/photo.jpg` })
    t.equal(link, `http://gatehouse.test/avatar/${avatarIdOf(user)}.image`, `${user}: a link`)
    t.same(await proxy.store.get(avatarIdOf(user)), await identiconPng(user), `${user}: the identicon is stored`)
  }
  t.same(pictures.requests, [], 'the picture host was never contacted')
  const told = lines.filter((l) => /sharp/.test(l))
  t.equal(told.length, 1, 'told once')
  t.match(told[0], /^\[WARN\] avatar: provider pictures need sharp, which is not installed \(npm i sharp@0\.35\); users get identicons instead$/)
})

t.test('without sharp: picture bytes are not stored either; a login without a picture logs nothing', async (t) => {
  const lines: string[] = []
  const proxy = proxyWithout(lines)
  t.teardown(() => proxy.close())
  await proxy.save('tg_1', {})
  t.same(lines, [], 'nothing to tell without a picture')
  await proxy.save('tg_2', { bytes: await jpeg(40, 30) })
  t.same(await proxy.store.get(avatarIdOf('tg_2')), await identiconPng('tg_2'), 'the identicon, not the bytes')
  t.equal(lines.length, 1)
})
