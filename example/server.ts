/**
 * The demo (`npm start`): every part of fastify-gatehouse wired into one Fastify server. SPEC §8.
 * `buildDemo(env)` builds it without listening, so the browser tests can start it on a free port.
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { existsSync } from 'node:fs'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin, safeEqual, type AuthOptions, type ProviderEntry } from '../index.js'

export interface DemoEnv { [key: string]: string | undefined }

/** Demo users of the direct provider `local`: password, role, admin flag. */
const USERS: Record<string, { passwd: string; role?: string; admin?: boolean }> = {
  alice: { passwd: 'alice-secret', role: 'editor' },
  admin: { passwd: 'admin-secret', admin: true }
}

export interface Demo { app: FastifyInstance; enabled: string[]; warnings: string[] }

export async function buildDemo (env: DemoEnv = process.env): Promise<Demo> {
  const warnings: string[] = []
  const port = Number(env.PORT ?? 8080)
  const url = env.AUTH_URL ?? `http://localhost:${port}`
  let secret = env.AUTH_SECRET
  if (secret === undefined || secret === '') {
    secret = randomBytes(32).toString('base64url')
    warnings.push('AUTH_SECRET is not set: using a random secret, sessions end when the demo restarts')
  }
  const fixedSecret = secret

  const app = Fastify({ logger: env.DEMO_QUIET === '1' ? false : { level: 'info' } })
  const providers: ProviderEntry[] = [
    { kind: 'direct', name: 'local', checker: (user, passwd) => USERS[user] !== undefined && safeEqual(USERS[user].passwd, passwd) }
  ]
  const opts: AuthOptions = {
    secret: () => fixedSecret,
    url,
    providers,
    // Roles and the admin flag come from the demo's user table; a real app would read its own database.
    claimsUpdater: (claims) => {
      const name = claims.user?.name ?? ''
      const entry = claims.user?.id.startsWith('local_') === true ? USERS[name] : undefined
      if (claims.user !== undefined && entry !== undefined) {
        claims.user = { ...claims.user, ...(entry.role !== undefined ? { role: entry.role } : {}), ...(entry.admin === true ? { attrs: { ...claims.user.attrs, admin: true } } : {}) }
      }
      return claims
    }
  }
  if (env.ADMIN_PASSWD !== undefined && env.ADMIN_PASSWD !== '') opts.adminPasswd = env.ADMIN_PASSWD
  await app.register(authPlugin, opts)

  const { auth } = app
  app.get('/api/open', async () => ({ message: 'open to everyone' }))
  app.get('/api/private', { preHandler: auth.authenticate }, async (req) => ({ message: `hello ${req.user!.name}`, user: req.user }))
  app.get('/api/admin', { preHandler: auth.admin }, async (req) => ({ message: `admin area, welcome ${req.user!.name}` }))
  app.get('/api/editor', { preHandler: auth.rbac(['editor']) }, async (req) => ({ message: `editor area, welcome ${req.user!.name}` }))

  const publicDir = findPublicDir()
  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(await readFile(join(publicDir, 'index.html'))))
  app.get('/app.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(await readFile(join(publicDir, 'app.js'))))
  app.get('/style.css', async (_req, reply) => reply.type('text/css; charset=utf-8').send(await readFile(join(publicDir, 'style.css'))))

  return { app, enabled: auth.providerNames(), warnings }
}

/** The page lives in example/public, beside the sources; the compiled server runs from dist/example. */
function findPublicDir (): string {
  const here = dirname(fileURLToPath(import.meta.url))
  for (const candidate of [join(here, 'public'), join(here, '..', '..', 'example', 'public')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate
  }
  throw new Error('demo: example/public not found')
}

async function main (): Promise<void> {
  const port = Number(process.env.PORT ?? 8080)
  const demo = await buildDemo()
  for (const w of demo.warnings) console.warn(`demo: warning: ${w}`)
  try {
    await demo.app.listen({ port, host: 'localhost' })
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    console.error(code === 'EADDRINUSE' ? `demo: port ${port} is already in use (set PORT to another port)` : `demo: cannot start: ${(err as Error).message}`)
    await demo.app.close()
    process.exit(1)
  }
  console.log(`demo: open ${process.env.AUTH_URL ?? `http://localhost:${port}`}/  — providers: ${demo.enabled.join(', ')}`)
  const stop = (): void => { demo.app.close().then(() => process.exit(0), () => process.exit(1)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main()
