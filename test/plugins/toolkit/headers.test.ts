import t from 'tap'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import { headersPlugin, headersHook, parseHeaderPairs } from '../../../plugins/toolkit/headers.js'

t.test('headers plugin and hook', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(async (scope) => {
      await scope.register(headersPlugin, { headers: ['X-Frame-Options:DENY', ' Link : <https://a.example:8443/x>; rel=preload', 'X-Empty:'] })
      scope.get('/a', async () => 'a')
      scope.get('/override', async (_req, reply) => { reply.header('x-frame-options', 'SAMEORIGIN'); return 'o' })
      scope.get('/boom', async () => { throw new Error('boom') })
    })
    app.get('/outside', async () => 'out')
    app.get('/hook', { preHandler: headersHook(['X-Hook:yes']) }, async () => 'h')
  })
  t.teardown(() => app.close())

  let r = await fetch(`${base}/a`)
  t.equal(r.headers.get('x-frame-options'), 'DENY')
  t.equal(r.headers.get('link'), '<https://a.example:8443/x>; rel=preload', 'value keeps its colons')
  t.equal(r.headers.get('x-empty'), '')
  r = await fetch(`${base}/override`)
  t.equal(r.headers.get('x-frame-options'), 'SAMEORIGIN', 'handler may override')
  r = await fetch(`${base}/boom`)
  t.equal(r.status, 500)
  t.equal(r.headers.get('x-frame-options'), 'DENY', 'kept on error answers')
  r = await fetch(`${base}/outside`)
  t.equal(r.headers.get('x-frame-options'), null, 'scoped')
  r = await fetch(`${base}/hook`)
  t.equal(r.headers.get('x-hook'), 'yes')
})

t.test('bad entries fail at startup', async (t) => {
  // The option names the entry; the message tells what is wrong with it.
  const bad: Array<[unknown, string, RegExp]> = [
    [['NoColon'], 'headers.headers[0]', /"NoColon" has no ":"/],
    [[':value'], 'headers.headers[0]', /"" is not a valid header name/],
    [['Bad Name:v'], 'headers.headers[0]', /"Bad Name" is not a valid header name/],
    [['X-A:ok', 'X-B:a\r\nSet-Cookie: x=1'], 'headers.headers[1]', /value must not contain CR, LF or NUL/],
    [[42], 'headers.headers[0]', /must be a "key:value" string/],
    ['X-A:1', 'headers.headers', /must be an array/],
    [undefined, 'headers.headers', /must be an array/]
  ]
  for (const [pairs, option, message] of bad) {
    const wanted = { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option, message }
    t.throws(() => parseHeaderPairs(pairs as string[]), wanted, JSON.stringify(pairs))
    t.throws(() => headersHook(pairs as string[]), wanted, 'hook form')
    const app = Fastify()
    app.register(headersPlugin, { headers: pairs as string[] })
    await t.rejects(async () => { await app.ready() }, wanted, 'plugin form')
    await app.close()
  }
})
