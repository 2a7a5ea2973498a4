/**
 * The page headers and the framing rule of every answer of the package's routes (lib/html.ts): a page's full set,
 * and `frame-ancestors 'none'` added to whatever CSP an answer carries (or as its CSP), `X-Frame-Options: DENY`.
 */
import t from 'tap'
import Fastify from 'fastify'
import { denyFraming, escapeHtml, PAGE_HEADERS, sendPage } from '../../lib/html.js'

t.test('denyFraming: added to a CSP without frame-ancestors, kept in one with it, set when there is none', async (t) => {
  const app = Fastify()
  app.addHook('onSend', async (_req, reply, payload) => { denyFraming(reply); return payload })
  app.get('/none', async () => ({ ok: true }))
  app.get('/own', async (_req, reply) => reply.header('content-security-policy', "default-src 'self'").send('own'))
  app.get('/framed', async (_req, reply) => reply.header('content-security-policy', "default-src 'self'; frame-ancestors 'self'").send('kept'))
  app.get('/page', async (_req, reply) => sendPage(reply, `<p>${escapeHtml('<b>&"\'')}</p>`, 400))
  t.teardown(() => app.close())
  const csp = async (url: string): Promise<string> => {
    const r = await app.inject(url)
    t.equal(r.headers['x-frame-options'], 'DENY', `${url}: DENY`)
    return String(r.headers['content-security-policy'])
  }
  t.equal(await csp('/none'), "frame-ancestors 'none'")
  t.equal(await csp('/own'), "default-src 'self'; frame-ancestors 'none'")
  t.equal(await csp('/framed'), "default-src 'self'; frame-ancestors 'self'", 'a route that chose its own frame-ancestors keeps it')
  const page = await app.inject('/page')
  t.equal(page.statusCode, 400)
  t.equal(page.body, '<p>&lt;b&gt;&amp;&quot;&#39;</p>')
  for (const [name, value] of Object.entries(PAGE_HEADERS)) t.equal(page.headers[name], value, name)
})
