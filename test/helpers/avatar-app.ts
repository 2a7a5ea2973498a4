/**
 * A real gatehouse app for avatar tests: the root plugin, the avatar plugin, and a tiny test-only provider
 * `pic` whose login (`GET /auth/pic/login?user=&picture=`) hands the picture link to the core's
 * completeLogin, exactly as the OAuth2 providers do after their callback.
 */
import { createHash } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import cookie from '@fastify/cookie'
import { corePlugin } from '../../plugins/core/plugin.js'
import { authPlugin } from '../../auth.js'
import { avatarPlugin, type AvatarOptions } from '../../plugins/avatar/plugin.js'
import { funcLogger } from '../../lib/logging/logger.js'
import type { ProviderOrFactory } from '../../plugins/core/kit.js'
import { listen } from './client.js'

/** Public base of the app in avatar links; tests fetch the link's path from the real base. */
export const PUBLIC_URL = 'http://gatehouse.test'

/** A self-implemented provider built on the provider kit: signs in `?user=` with the picture `?picture=`. */
export function picProvider (): ProviderOrFactory {
  return (kit) => ({
    name: 'pic',
    async login (request: FastifyRequest, reply: FastifyReply) {
      const q = request.query as { user?: string; picture?: string }
      const name = q.user ?? 'someone'
      const id = 'pic_' + createHash('sha1').update(name).digest('hex')
      return kit.completeLogin(request, reply, { user: { name, id }, avatar: q.picture === undefined ? undefined : { url: q.picture } })
    }
  })
}

export interface TestApp { app: FastifyInstance; base: string; lines: string[] }

/**
 * Starts the app on 127.0.0.1; every log line of the package lands in `lines`. `setup` runs once the plugins
 * are loaded (to add providers); `url` is the public base (default PUBLIC_URL).
 */
export async function startApp (avatar: AvatarOptions, setup?: (app: FastifyInstance) => void, url = PUBLIC_URL): Promise<TestApp> {
  const lines: string[] = []
  const { app, base } = await listen(async (app) => {
    const root = {
      secret: () => 'avatar-test-secret-0123456789-0123456789abcdef',
      url,
      logger: funcLogger((line) => lines.push(line)),
      providers: [{ kind: 'handler' as const, provider: picProvider() }]
    }
    // Always through the root's options: a root that dropped or renamed one would fail these tests. The login
    // waits for the picture's outcome (`loginWait` an hour unless the test sets it), so that what a login hands out
    // does not depend on how fast a loaded machine fetches and re-encodes (plugin.login-wait.test.ts is about it).
    await app.register(authPlugin, {
      ...root,
      avatar: { store: avatar.store, prefix: avatar.prefix, resizeLimit: avatar.resizeLimit, maxAge: avatar.maxAge, fetch: { loginWait: '1h', ...avatar.fetch } }
    })
    setup?.(app)
  })
  return { app, base, lines }
}

/**
 * The auth core and the avatar plugin without the root plugin: for tests of avatar options the root plugin
 * does not carry (url, maxAge) and of registration itself. Not started; the caller closes it.
 */
export async function coreWithAvatar (avatar?: AvatarOptions): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(cookie)
  await app.register(corePlugin, { secret: () => 'avatar-test-secret-0123456789-0123456789abcdef', url: PUBLIC_URL })
  if (avatar !== undefined) await app.register(avatarPlugin, avatar)
  return app
}

/** Logs in through `pic` and returns the JSON user (status asserted by the caller through `res`). */
export async function login (base: string, user: string, picture?: string): Promise<{ res: Response; body: { id: string; name: string; picture?: string } }> {
  const q = new URLSearchParams({ user })
  if (picture !== undefined) q.set('picture', picture)
  const res = await fetch(`${base}/auth/pic/login?${q.toString()}`, { redirect: 'manual' })
  return { res, body: await res.json() as { id: string; name: string; picture?: string } }
}

/** GET of an avatar link's path on the real server. */
export function getAvatar (base: string, link: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(base + new URL(link).pathname, { headers })
}
