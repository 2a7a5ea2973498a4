/**
 * crossOriginProtection by the Go 1.25 `CrossOriginProtection` rule: safe methods pass; Sec-Fetch-Site decides
 * when sent; without it an Origin must name the Host; trusted origins and bypass exempt; refusals are 403 JSON
 * and the handler never runs. Bad options name the option.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { crossOriginProtectionHook, crossOriginProtectionPlugin } from '../../../toolkit.js'
import { OptionsError } from '../../../lib/errors.js'

const REFUSED = { error: 'forbidden', details: 'cross-origin request refused: unsafe methods only from this origin', code: 'GATEHOUSE_CROSS_SITE' }

async function app (): Promise<{ app: FastifyInstance; ran: string[] }> {
  const ran: string[] = []
  const app = Fastify()
  await app.register(async (scope) => {
    await scope.register(crossOriginProtectionPlugin, { trustedOrigins: ['https://sso.example.com'], bypass: (r) => r.url === '/hook' })
    scope.route({ method: ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/act', handler: async (r) => { ran.push(r.method); return { ok: true } } })
    scope.post('/hook', async () => { ran.push('hook'); return { ok: true } })
  })
  app.post('/open', async () => ({ open: true }))
  app.post('/hooked', { onRequest: crossOriginProtectionHook() }, async () => { ran.push('hooked'); return { ok: true } })
  return { app, ran }
}

t.test('the Go rule, case by case', async (t) => {
  const { app: a, ran } = await app()
  t.teardown(() => a.close())
  const host = 'api.example.com'
  const cases: Array<[string, string, Record<string, string>, number, string]> = [
    ['GET', '/act', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, 200, 'GET is safe'],
    ['HEAD', '/act', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, 200, 'HEAD is safe'],
    ['OPTIONS', '/act', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, 200, 'OPTIONS is safe'],
    ['POST', '/act', { 'sec-fetch-site': 'same-origin' }, 200, 'same-origin'],
    ['POST', '/act', { 'sec-fetch-site': 'none' }, 200, 'none (typed, bookmark)'],
    ['POST', '/act', { 'sec-fetch-site': 'cross-site' }, 403, 'cross-site'],
    ['PUT', '/act', { 'sec-fetch-site': 'same-site', origin: 'https://www.example.com' }, 403, 'same-site is another origin'],
    ['DELETE', '/act', { 'sec-fetch-site': 'cross-site', origin: `https://${host}` }, 403, 'Sec-Fetch-Site wins over an Origin naming the host'],
    ['PATCH', '/act', { 'sec-fetch-site': 'cross-site', origin: 'https://sso.example.com' }, 200, 'trusted origin'],
    ['POST', '/act', { 'sec-fetch-site': 'cross-site', origin: 'https://sso.example.com:8443' }, 403, 'a trusted origin matches exactly (port)'],
    ['POST', '/act', { 'sec-fetch-site': 'cross-site', origin: 'http://sso.example.com' }, 403, 'a trusted origin matches exactly (scheme)'],
    ['POST', '/act', {}, 200, 'no Sec-Fetch-Site, no Origin: not a browser'],
    ['POST', '/act', { origin: `https://${host}` }, 200, 'old browser, Origin names the Host'],
    ['POST', '/act', { origin: `https://${host.toUpperCase()}` }, 200, 'host compared case-insensitively'],
    ['POST', '/act', { origin: 'https://evil.example' }, 403, 'old browser, other Origin'],
    ['POST', '/act', { origin: `https://${host}:8443` }, 403, 'old browser, other port'],
    ['POST', '/act', { origin: 'null' }, 403, 'Origin: null'],
    ['POST', '/act', { origin: 'not a url' }, 403, 'garbage Origin'],
    ['POST', '/act', { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example' }, 403, 'X-Forwarded-Host is not the host'],
    ['POST', '/act', { origin: 'https://sso.example.com' }, 200, 'old browser, trusted origin'],
    ['POST', '/hook', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, 200, 'bypass'],
    ['POST', '/open', { 'sec-fetch-site': 'cross-site' }, 200, 'scoped to its context'],
    ['POST', '/hooked', { 'sec-fetch-site': 'cross-site' }, 403, 'hook form refuses'],
    ['POST', '/hooked', { 'sec-fetch-site': 'same-origin' }, 200, 'hook form passes']
  ]
  for (const [method, url, headers, status, why] of cases) {
    ran.length = 0
    const res = await a.inject({ method: method as 'POST', url, headers: { host, ...headers } })
    t.equal(res.statusCode, status, why)
    if (status === 403) {
      t.same(res.json(), REFUSED, `${why}: the error body`)
      t.same(ran, [], `${why}: the handler never ran`)
    }
  }
})

t.test('bad options: an OptionsError naming the option', async (t) => {
  const bad: Array<[unknown, string]> = [
    [{ trustedOrigins: 'https://a.example' }, 'crossOriginProtection.trustedOrigins'],
    [{ trustedOrigins: ['https://a.example/path'] }, 'crossOriginProtection.trustedOrigins[0]'],
    [{ trustedOrigins: ['https://ok.example', '*'] }, 'crossOriginProtection.trustedOrigins[1]'],
    [{ trustedOrigins: [42] }, 'crossOriginProtection.trustedOrigins[0]'],
    [{ trustedOrigins: ['ftp://a.example'] }, 'crossOriginProtection.trustedOrigins[0]'],
    [{ bypass: '/hook' }, 'crossOriginProtection.bypass'],
    ['yes', 'crossOriginProtection']
  ]
  for (const [opts, option] of bad) {
    const app = Fastify()
    const err = await app.register(crossOriginProtectionPlugin, opts as object).ready().then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof OptionsError, `${option}: an OptionsError`)
    t.equal((err as OptionsError).option, option)
    await app.close()
  }
  t.throws(() => crossOriginProtectionHook({ trustedOrigins: ['nope'] }), { option: 'crossOriginProtection.trustedOrigins[0]' })
})
