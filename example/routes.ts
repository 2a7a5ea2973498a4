/**
 * The demo's own routes: the page (plain HTML/CSS/JS from example/public) and the API the page's buttons call,
 * each protected by one of the auth hooks.
 */
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { projectFile } from './paths.js'

const PAGE_FILES: Record<string, string> = {
  '/': 'index.html',
  '/app.js': 'app.js',
  '/passkey.js': 'passkey.js',
  '/sessions.js': 'sessions.js',
  '/totp.js': 'totp.js',
  '/device.js': 'device.js',
  '/captcha.js': 'captcha.js',
  '/style.css': 'style.css',
  '/favicon.svg': 'favicon.svg'
}
/** Browser libraries served as they are installed (no bundler): path → file under the project root. */
const VENDOR_FILES: Record<string, string> = {
  '/vendor/simplewebauthn-browser.js': 'node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js'
}
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml'
}

export function registerApi (app: FastifyInstance): void {
  const { auth } = app
  app.get('/api/open', async () => ({ message: 'open to everyone' }))
  app.get('/api/private', { preHandler: auth.authenticate }, async (req) => ({ message: `hello ${req.user!.name}`, user: req.user }))
  app.get('/api/admin', { preHandler: auth.admin }, async (req) => ({ message: `admin area, welcome ${req.user!.name}` }))
  app.get('/api/editor', { preHandler: auth.rbac(['editor']) }, async (req) => ({ message: `editor area, welcome ${req.user!.name}` }))
}

export function registerPage (app: FastifyInstance): void {
  const dir = dirname(projectFile('example/public/index.html'))
  const files: Array<[string, string]> = [
    ...Object.entries(PAGE_FILES).map(([path, file]): [string, string] => [path, join(dir, file)]),
    ...Object.entries(VENDOR_FILES).map(([path, file]): [string, string] => [path, projectFile(file)])
  ]
  for (const [path, file] of files) {
    const type = TYPES[file.slice(file.lastIndexOf('.') + 1)]!
    app.get(path, async (_req, reply) => reply.type(type).header('cache-control', 'no-cache').send(await readFile(file)))
  }
}

/**
 * A login the browser navigated to (an OAuth2 redirect, a provider's callback, SAML's assertion consumer service)
 * that fails would leave the user on a JSON error. For page navigations to a provider's login, callback or ACS,
 * send the browser back to the page with the error in `?error=`, where the page shows it; API calls (fetch, curl)
 * and the other auth routes (`/user`, `/status`, opened by hand to look at them) still get the JSON.
 */
export function registerLoginFailureRedirect (app: FastifyInstance, authPrefix: string): void {
  const loginRoute = new RegExp(`^${authPrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[^/?]+/(?:login|callback|acs)(?:\\?|$)`)
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode < 400 || (request.method !== 'GET' && request.method !== 'POST')) return payload
    if (!loginRoute.test(request.url) || !isPageNavigation(request)) return payload
    reply.code(303).header('location', `/?error=${encodeURIComponent(errorText(payload))}`).type('text/plain; charset=utf-8')
    reply.removeHeader('content-length')
    return ''
  })
}

/** Browsers send `Sec-Fetch-Mode: navigate` on page loads; `Accept: text/html` covers older ones. */
function isPageNavigation (request: FastifyRequest): boolean {
  const mode = request.headers['sec-fetch-mode']
  if (typeof mode === 'string') return mode === 'navigate'
  return (request.headers.accept ?? '').includes('text/html')
}

function errorText (payload: unknown): string {
  try {
    const body = JSON.parse(String(payload)) as { error?: unknown; details?: unknown }
    const text = [body.error, body.details].filter((v) => typeof v === 'string' && v !== '').join(': ')
    return text.slice(0, 300) || 'sign-in failed'
  } catch {
    return 'sign-in failed'
  }
}
