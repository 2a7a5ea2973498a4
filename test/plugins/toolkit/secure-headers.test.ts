/**
 * secureHeaders: helmet's header set on every answer of its context (error answers too), each option changing
 * its header, a handler free to override one; bad options, and a policy helmet refuses, are OptionsErrors at
 * registration.
 */
import t from 'tap'
import Fastify from 'fastify'
import { secureHeadersPlugin, type SecureHeadersOptions } from '../../../toolkit.js'
import { OptionsError } from '../../../lib/errors.js'

async function headersOf (opts: SecureHeadersOptions | undefined, url = '/x'): Promise<Record<string, unknown>> {
  const app = Fastify()
  await app.register(async (scope) => {
    await scope.register(secureHeadersPlugin, opts)
    scope.get('/x', async () => ({ ok: true }))
    scope.get('/boom', async () => { throw new Error('boom') })
    scope.get('/own', async (_req, reply) => { reply.header('x-frame-options', 'SAMEORIGIN'); return 'own' })
  })
  app.get('/outside', async () => 'outside')
  const res = await app.inject(url)
  await app.close()
  return res.headers
}

t.test('the default set', async (t) => {
  const h = await headersOf(undefined)
  t.match(h, {
    'content-security-policy': /^default-src 'self';.*object-src 'none'/,
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0'
  })
  t.equal((await headersOf({}, '/boom'))['x-content-type-options'], 'nosniff', 'a 500 answer carries them')
  t.equal((await headersOf({}, '/own'))['x-frame-options'], 'SAMEORIGIN', 'a handler may override one')
  t.equal((await headersOf({}, '/outside'))['x-frame-options'], undefined, 'scoped to its context')
})

t.test('options change their headers', async (t) => {
  const h = await headersOf({
    frameOptions: 'SAMEORIGIN',
    referrerPolicy: 'strict-origin-when-cross-origin',
    hsts: { maxAge: 63072000, preload: true },
    contentSecurityPolicy: { 'default-src': ["'none'"], 'img-src': ["'self'", 'data:'] }
  })
  t.equal(h['x-frame-options'], 'SAMEORIGIN')
  t.equal(h['referrer-policy'], 'strict-origin-when-cross-origin')
  t.equal(h['strict-transport-security'], 'max-age=63072000; includeSubDomains; preload')
  t.equal(h['content-security-policy'], "default-src 'none';img-src 'self' data:")
  const off = await headersOf({ frameOptions: false, referrerPolicy: false, hsts: false, contentSecurityPolicy: false })
  for (const name of ['x-frame-options', 'referrer-policy', 'strict-transport-security', 'content-security-policy']) t.equal(off[name], undefined, `${name} off`)
  t.equal(off['x-content-type-options'], 'nosniff', 'the rest stays')
})

t.test('bad options: an OptionsError naming the option', async (t) => {
  const bad: Array<[unknown, string]> = [
    [{ frameOptions: 'ALLOW-FROM x' }, 'secureHeaders.frameOptions'],
    [{ referrerPolicy: 'no referrer\r\nX: y' }, 'secureHeaders.referrerPolicy'],
    [{ referrerPolicy: 'no-such-policy' }, 'secureHeaders'],
    [{ hsts: true }, 'secureHeaders.hsts'],
    [{ hsts: { maxAge: -1 } }, 'secureHeaders.hsts.maxAge'],
    [{ hsts: { preload: 'yes' } }, 'secureHeaders.hsts.preload'],
    [{ contentSecurityPolicy: ['default-src'] }, 'secureHeaders.contentSecurityPolicy'],
    [{ contentSecurityPolicy: { 'default-src': "'self'" } }, 'secureHeaders.contentSecurityPolicy.default-src'],
    [{ contentSecurityPolicy: { 'default-src': ["'self'; script-src *"] } }, 'secureHeaders'],
    [{ contentSecurityPolicy: { 'script-src': ['self'] } }, 'secureHeaders']
  ]
  for (const [opts, option] of bad) {
    const app = Fastify()
    const err = await app.register(secureHeadersPlugin, opts as SecureHeadersOptions).ready().then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof OptionsError, `${JSON.stringify(opts)}: an OptionsError`)
    t.equal((err as OptionsError).option, option, JSON.stringify(opts))
    await app.close()
  }
})
