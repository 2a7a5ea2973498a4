/**
 * The toolkit's cors and crossOriginProtection in a real browser (headless Chromium), over two loopback origins:
 * the API on http://127.0.0.1:<A>, the pages on http://localhost:<B> (the allowed origin) and
 * http://localhost:<C> (another). Chromium's own preflight (a PUT with a JSON body and a custom header, with
 * `credentials: 'include'`, so the browser insists on the exact origin and `Access-Control-Allow-Credentials`) reaches
 * the API from the allowed page and the page reads the answer; from the other origin the browser stops at the
 * preflight. An unsafe request the browser sends without a
 * preflight (a form-like POST, `no-cors`) from the other origin is refused by crossOriginProtection by the
 * browser's own Sec-Fetch-Site, and its handler never runs; from the allowed origin (trusted) it runs.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { corsPlugin, crossOriginProtectionPlugin } from '../../../toolkit.js'
import { chromiumMissing, launch, waitText, type TestBrowser } from './browser.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('CORS preflight from Chromium on another origin', { skip: missing }, async () => {})
} else {
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(() => browser.close())
  const { page, shot } = browser

  async function listenOn (app: FastifyInstance, host: string): Promise<string> {
    await app.listen({ port: 0, host: '127.0.0.1' })
    return `http://${host}:${(app.server.address() as { port: number }).port}`
  }

  /** A page whose script runs `script` (with `api` defined) and writes its outcome into #out. */
  async function pageServer (script: string): Promise<{ origin: string; setApi: (api: string) => void }> {
    const app = Fastify({ forceCloseConnections: true })
    t.teardown(() => app.close())
    let api = ''
    app.get('/', async (_req, reply) => reply.type('text/html').send(`<!doctype html><title>page</title><pre id="out">running</pre>
      <script>const api = ${JSON.stringify(api)}; (async () => { ${script} })().then((r) => { out.textContent = 'done ' + r }, (e) => { out.textContent = 'failed ' + e.name + ': ' + e.message })</script>`))
    return { origin: await listenOn(app, 'localhost'), setApi: (a) => { api = a } }
  }

  const CALL = `const r = await fetch(api + '/data', { method: 'PUT', credentials: 'include', headers: { 'content-type': 'application/json', 'x-requested-with': 'page' }, body: JSON.stringify({ n: 1 }) });
    return r.status + ' ' + (await r.text())`
  const FORM_POST = `await fetch(api + '/submit', { method: 'POST', mode: 'no-cors', credentials: 'include', body: 'a=1' }); return 'sent'`
  const allowed = await pageServer(CALL)
  const other = await pageServer(CALL)
  const allowedForm = await pageServer(FORM_POST)
  const otherForm = await pageServer(FORM_POST)

  const seen: Array<{ method: string; url: string; origin?: string | undefined; site?: string | undefined }> = []
  const submitted: string[] = []
  const api = Fastify({ forceCloseConnections: true })
  t.teardown(() => api.close())
  api.addHook('onRequest', async (req) => {
    seen.push({ method: req.method, url: req.url, origin: req.headers.origin, site: req.headers['sec-fetch-site'] as string | undefined })
  })
  const answered: string[] = []
  api.addHook('onResponse', async (req, reply) => { answered.push(`${req.method} ${req.url} ${reply.statusCode}`) })
  await api.register(corsPlugin, { origins: [allowed.origin, allowedForm.origin], credentials: true, maxAge: 0 })
  await api.register(crossOriginProtectionPlugin, { trustedOrigins: [allowed.origin, allowedForm.origin] })
  api.put('/data', async (req) => ({ got: req.body }))
  api.post('/submit', async (req) => { submitted.push(String(req.headers.origin)); return 'ok' })
  const apiOrigin = await listenOn(api, '127.0.0.1')
  for (const p of [allowed, other, allowedForm, otherForm]) p.setApi(apiOrigin)

  t.test('the allowed origin: Chromium preflights, then sends the PUT with credentials and reads the answer', async (t) => {
    seen.length = 0
    await page.goto(`${allowed.origin}/`)
    const text = await waitText(page, '#out', /^(done|failed)/)
    await shot('allowed-origin')
    t.equal(text, 'done 200 {"got":{"n":1}}')
    const preflight = seen.find((s) => s.method === 'OPTIONS')
    t.ok(preflight, 'the browser sent a preflight')
    t.equal(preflight?.origin, allowed.origin, 'from the page\'s origin')
    t.match(seen.find((s) => s.method === 'PUT'), { origin: allowed.origin, site: 'cross-site' },
      'then the PUT (cross-site to Chromium, passed by crossOriginProtection as a trusted origin)')
  })

  t.test('another origin: the preflight gets no permission, the browser never sends the PUT', async (t) => {
    seen.length = 0
    await page.goto(`${other.origin}/`)
    const text = await waitText(page, '#out', /^(done|failed)/)
    await shot('other-origin')
    t.match(text, /^failed TypeError: Failed to fetch/)
    t.same(seen.map((s) => s.method), ['OPTIONS'], 'only the preflight reached the API')
  })

  t.test('a no-cors POST: refused from the other origin by Sec-Fetch-Site, accepted from the trusted one', async (t) => {
    seen.length = 0
    submitted.length = 0
    answered.length = 0
    await page.goto(`${otherForm.origin}/`)
    await waitText(page, '#out', /^done sent/)
    await waitFor(() => answered.length > 0)
    t.same(answered, ['POST /submit 403'], 'answered 403')
    t.match(seen.find((s) => s.url === '/submit'), { method: 'POST', origin: otherForm.origin }, 'the browser sent it')
    t.same(submitted, [], 'the handler never ran')
    await page.goto(`${allowedForm.origin}/`)
    await waitText(page, '#out', /^done sent/)
    await t.resolves(waitFor(() => submitted.length === 1), 'the trusted origin\'s POST ran')
    t.same(submitted, [allowedForm.origin])
  })
}

/** Resolves once `test` holds (checked on each turn of the event loop; the server answers asynchronously). */
async function waitFor (test: () => boolean): Promise<void> {
  while (!test()) await new Promise((resolve) => setImmediate(resolve))
}
