import t from 'tap'
import Fastify from 'fastify'
import { listen } from '../../helpers/client.js'
import { onlyFromPlugin, onlyFromHook } from '../../../plugins/toolkit/only-from.js'

const DENIED = { error: 'forbidden', details: 'source address is not allowed', code: 'GATEHOUSE_FORBIDDEN' }

// The test client connects from 127.0.0.1, which by default is a trusted proxy: headers are then believed,
// as they would be from a reverse proxy on the same host.
t.test('onlyFrom behind a trusted proxy: X-Forwarded-For, X-Real-IP, v4/v6, spoofing, garbage', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(onlyFromPlugin, { allow: ['10.0.0.0/8', '2001:db8::/32', '192.168.1.', '172.16.5.4'] })
      scope.get('/in', async () => 'allowed')
    })
    app.get('/open', async () => 'open')
    app.get('/hooked', { onRequest: onlyFromHook(['203.0.113.7']) }, async () => 'hooked')
  })
  t.teardown(() => app.close())

  const cases: Array<[Record<string, string>, number, string]> = [
    [{ 'x-forwarded-for': '10.1.2.3' }, 200, 'CIDR v4'],
    [{ 'x-forwarded-for': '172.16.5.4' }, 200, 'full address'],
    [{ 'x-forwarded-for': '192.168.1.77' }, 200, 'prefix'],
    [{ 'x-forwarded-for': '192.168.10.7' }, 403, 'prefix is textual on dotted boundaries'],
    [{ 'x-forwarded-for': '8.8.8.8' }, 403, 'not listed'],
    [{ 'x-forwarded-for': '10.1.2.3, 8.8.8.8' }, 403, 'spoofed allowed address prepended by the client'],
    [{ 'x-forwarded-for': '8.8.8.8, 10.1.2.3' }, 200, 'the hop the proxy saw is the client'],
    [{ 'x-forwarded-for': '10.1.2.3, 127.0.0.1' }, 200, 'trusted proxies on the right are skipped'],
    [{ 'x-forwarded-for': '10.1.2.3,127.0.0.1,::1' }, 200, 'several trusted hops'],
    [{ 'x-forwarded-for': '2001:db8::5' }, 200, 'IPv6 CIDR'],
    [{ 'x-forwarded-for': '[2001:DB8:0::5]:443' }, 200, 'IPv6 with brackets and port'],
    [{ 'x-forwarded-for': '2001:db9::5' }, 403, 'IPv6 outside'],
    [{ 'x-forwarded-for': '::ffff:10.9.9.9' }, 200, 'IPv4-mapped IPv6'],
    [{ 'x-forwarded-for': '::ffff:8.8.8.8' }, 403, 'IPv4-mapped outside'],
    [{ 'x-forwarded-for': 'not-an-ip' }, 403, 'garbage'],
    [{ 'x-forwarded-for': '10.1.2.3, garbage' }, 403, 'garbage in the chain'],
    [{ 'x-forwarded-for': '10.1.2.3,,' }, 403, 'empty hops'],
    [{ 'x-forwarded-for': '010.1.2.3' }, 403, 'leading zeros are not an address'],
    [{ 'x-forwarded-for': '10.1.2.3/8' }, 403, 'a CIDR is not an address'],
    [{ 'x-real-ip': '192.168.1.50' }, 200, 'X-Real-IP'],
    [{ 'x-real-ip': '8.8.8.8' }, 403, 'X-Real-IP not listed'],
    [{ 'x-real-ip': '<script>' }, 403, 'X-Real-IP garbage'],
    [{ 'x-forwarded-for': '8.8.8.8', 'x-real-ip': '10.0.0.1' }, 403, 'X-Forwarded-For wins over X-Real-IP'],
    [{}, 403, 'no headers: the socket peer 127.0.0.1 is not listed']
  ]
  for (const [headers, status, why] of cases) {
    const r = await fetch(`${base}/in`, { headers })
    t.equal(r.status, status, why)
    if (status === 403) {
      t.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
      t.same(await r.json(), DENIED)
    } else t.equal(await r.text(), 'allowed')
  }
  t.equal(await (await fetch(`${base}/open`)).text(), 'open', 'scoped to its context')
  t.equal((await fetch(`${base}/hooked`, { headers: { 'x-real-ip': '203.0.113.7' } })).status, 200, 'hook form allows')
  const h = await fetch(`${base}/hooked`)
  t.equal(h.status, 403, 'hook form denies')
  t.same(await h.json(), DENIED)
})

t.test('onlyFrom without trusted proxies checks the socket only', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(onlyFromPlugin, { allow: ['10.0.0.0/8'], trustedProxies: [] })
      scope.get('/strict', async () => 'x')
    })
    await app.register(async (scope) => {
      await scope.register(onlyFromPlugin, { allow: ['127.0.0.1', '::1'], trustedProxies: [] })
      scope.get('/local', async () => 'local')
    })
  })
  t.teardown(() => app.close())
  const r = await fetch(`${base}/strict`, { headers: { 'x-forwarded-for': '10.1.2.3', 'x-real-ip': '10.1.2.3' } })
  t.equal(r.status, 403, 'headers are not believed from an untrusted peer')
  t.same(await r.json(), DENIED)
  const l = await fetch(`${base}/local`, { headers: { 'x-forwarded-for': '8.8.8.8' } })
  t.equal(await l.text(), 'local', 'the socket address decides')
})

t.test('onlyFrom refuses bad options at registration', async (t) => {
  for (const [opts, option] of [
    [{}, 'onlyFrom.allow'],
    [{ allow: [] }, 'onlyFrom.allow'],
    [{ allow: ['10.0.0.0/33'] }, 'onlyFrom.allow'],
    [{ allow: ['example.com'] }, 'onlyFrom.allow'],
    [{ allow: '10.0.0.1' }, 'onlyFrom.allow'],
    [{ allow: ['10.'], trustedProxies: ['x'] }, 'onlyFrom.trustedProxies'],
    [{ allow: ['10.'], trustedProxies: '127.0.0.1' }, 'onlyFrom.trustedProxies']
  ] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(onlyFromPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await bad.close()
  }
  t.throws(() => onlyFromHook(['nope']), { code: 'GATEHOUSE_OPTION', option: 'onlyFrom.allow' })
  t.throws(() => onlyFromHook(['10.'], { trustedProxies: ['nope'] }), { code: 'GATEHOUSE_OPTION', option: 'onlyFrom.trustedProxies' })
})

t.test('onlyFrom: a complete address matches that address only, never a longer one with its text (upstream #48)', async (t) => {
  const app = Fastify()
  await app.register(onlyFromPlugin, { allow: ['10.1.2.3', '2001:db8::1', '192.168.7.'], trustedProxies: [] })
  app.get('/in', async () => 'allowed')
  await app.ready()
  t.teardown(() => app.close())
  const cases: Array<[string, number, string]> = [
    ['10.1.2.3', 200, 'the address itself'],
    ['10.1.2.30', 403, 'a longer IPv4 address with the same text start'],
    ['10.1.2.34', 403, 'another'],
    ['2001:db8::1', 200, 'IPv6 itself'],
    ['2001:db8:0:0:0:0:0:1', 200, 'IPv6 in its long form'],
    ['2001:db8::10', 403, 'a longer IPv6 address with the same text start'],
    ['2001:db8::1:0', 403, 'another IPv6 one'],
    ['192.168.7.200', 200, 'an explicit prefix keeps matching by prefix']
  ]
  for (const [ip, status, why] of cases) t.equal((await app.inject({ url: '/in', remoteAddress: ip })).statusCode, status, `${ip}: ${why}`)
})
