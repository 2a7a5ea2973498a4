/**
 * The dev provider's pictures reach the avatar proxy in a fresh app (issue 23 item 14): exactly the dev server's
 * own origin is let through the fetch guard, and any other loopback link is still refused.
 */
import t from 'tap'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import sharp from 'sharp'
import { MemoryStore } from '../../../stores/index.js'
import { avatarIdOf } from '../../../plugins/avatar/plugin.js'
import { userId } from '../../../lib/user.js'
import { devProvider } from '../../../providers/index.js'
import type { RunningOAuth2Server } from '../../../servers/index.js'
import { Browser } from '../../helpers/oauth2-browser.js'
import { client } from '../../helpers/client.js'
import { startApp } from '../../helpers/avatar-app.js'

const APP_URL = 'http://app.test'

/** One colour everywhere: the dev server's picture (an identicon has a pattern on a background). */
async function uniform (png: Uint8Array): Promise<boolean> {
  const { channels } = await sharp(png).stats()
  return channels.every((c) => c.min === c.max)
}

/** Another loopback server with a PNG, counting the requests that reach it. */
async function otherLoopbackServer (): Promise<{ server: Server; url: string; hits: () => number }> {
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } }).png().toBuffer()
  let hits = 0
  const server = createServer((_req, res) => { hits++; res.writeHead(200, { 'content-type': 'image/png' }).end(png) })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/p.png`, hits: () => hits }
}

t.test('a fresh app stores the dev server\'s picture; another loopback link is still refused', async (t) => {
  const store = new MemoryStore()
  let dev: RunningOAuth2Server | undefined
  // No avatar.fetch.allowPrivate: the defaults of a fresh app.
  const { app, base, lines } = await startApp({ store }, (app) => {
    void app.register(devProvider, { port: 0, onServer: (s) => { dev = s } })
  }, APP_URL)
  t.teardown(() => app.close())
  const other = await otherLoopbackServer()
  t.teardown(() => other.server.close())

  const browser = new Browser()
  browser.hosts.set('app.test', base)
  const page = await browser.navigate(`${APP_URL}/auth/dev/login`)
  t.ok(page.url.startsWith(dev!.url), 'the dev server\'s login page')
  const nav = await browser.submitForm(page.url, page.body, { user: 'dev_fresh' })
  t.equal(nav.res.status, 200, 'signed in')
  const id = userId('dev', 'dev_fresh')
  const stored = await store.get(avatarIdOf(id))
  t.ok(stored, 'an avatar is stored')
  t.ok(await uniform(stored!), 'it is the dev server\'s picture, not an identicon')
  t.notOk(lines.some((l) => l.includes('refused for user')), 'no fetch was refused')

  // The same loopback address on another port: the guard refuses it before connecting.
  const r = await client(base).fetch(`/auth/pic/login?user=mallory&picture=${encodeURIComponent(other.url)}`)
  t.equal(r.status, 200)
  t.equal(other.hits(), 0, 'the other loopback server was never contacted')
  t.ok(lines.some((l) => /picture from 127\.0\.0\.1:\d+ refused for user .*resolves to non-public address 127\.0\.0\.1/.test(l)), 'refused, with the reason')
  const mallory = await store.get(avatarIdOf('pic_' + (await import('node:crypto')).createHash('sha1').update('mallory').digest('hex')))
  t.ok(mallory, 'an identicon instead')
  t.notOk(await uniform(mallory!), 'which is not the other server\'s picture')
})
