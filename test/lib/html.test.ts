/**
 * The page headers and the framing rule of every answer of the package's routes (lib/html.ts): a page's full set,
 * and `frame-ancestors 'none'` added to whatever CSP an answer carries (or as its CSP), `X-Frame-Options: DENY`.
 */
import t from 'tap'
import Fastify from 'fastify'
import { denyFraming, escapeHtml, PAGE_CSP, PAGE_HEADERS, pageCsp, sendPage } from '../../lib/html.js'

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

// A form posted to the page's own origin and answered with a redirect elsewhere (a code handed to the client's
// redirect URI) is held by the browser unless form-action allows that target: Chromium stopped the dev server's
// login at its own page until the target was added.
t.test('pageCsp: the redirect target of the page\'s form is allowed in form-action, nothing else', async (t) => {
  t.equal(pageCsp('http://127.0.0.1:8080/auth/dev/callback?x=1'), PAGE_CSP.replace("form-action 'self'", "form-action 'self' http://127.0.0.1:8080"))
  t.equal(pageCsp('com.example.app:/callback'), PAGE_CSP.replace("form-action 'self'", "form-action 'self' com.example.app:"))
  t.equal(pageCsp('not a uri'), PAGE_CSP, 'not a URI: self only')
  t.match(pageCsp('https://app.example.com/cb'), /frame-ancestors 'none'/, 'still unframeable')
  const app = Fastify()
  app.get('/', async (_req, reply) => sendPage(reply, '<p>hi</p>', 200, 'https://app.example.com/cb'))
  const page = await app.inject('/')
  t.equal(page.headers['content-security-policy'], PAGE_CSP.replace("form-action 'self'", "form-action 'self' https://app.example.com"))
  t.equal(page.headers['x-frame-options'], 'DENY')
})
