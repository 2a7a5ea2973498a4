import t from 'tap'
import Fastify from 'fastify'
import { listen } from '../../helpers/client.js'
import { realIpPlugin, realIpHook, realIp } from '../../../plugins/toolkit/real-ip.js'

t.test('realIp: header priority, public addresses only, socket fallback', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(realIpPlugin)
      scope.get('/ip', async (req) => ({ stored: req.realIp, get: realIp(req) }))
    })
    app.get('/helper', async (req) => ({ get: realIp(req) }))
    app.get('/hooked', { onRequest: realIpHook({ trustedProxies: ['10.0.0.0/8'] }) }, async (req) => ({ stored: req.realIp }))
  })
  t.teardown(() => app.close())

  const cases: Array<[Record<string, string>, string, string]> = [
    [{}, '127.0.0.1', 'socket when no headers'],
    [{ 'x-real-ip': '8.8.8.8' }, '8.8.8.8', 'X-Real-IP'],
    [{ 'x-real-ip': '8.8.8.8', 'cf-connecting-ip': '1.1.1.1', 'x-forwarded-for': '9.9.9.9' }, '8.8.8.8', 'X-Real-IP first'],
    [{ 'cf-connecting-ip': '1.1.1.1', 'x-forwarded-for': '9.9.9.9' }, '1.1.1.1', 'CF-Connecting-IP second'],
    [{ 'x-real-ip': '10.0.0.1', 'cf-connecting-ip': '1.1.1.1' }, '1.1.1.1', 'private X-Real-IP skipped'],
    [{ 'x-forwarded-for': '10.0.0.1, 192.168.0.1, 9.9.9.9, 8.8.8.8' }, '9.9.9.9', 'leftmost public X-Forwarded-For'],
    [{ 'x-forwarded-for': 'garbage, 127.0.0.1, 169.254.169.254, 100.64.1.1, 9.9.9.9' }, '9.9.9.9', 'garbage, loopback, link-local, CGNAT skipped'],
    [{ 'x-forwarded-for': '10.0.0.1, 192.168.0.1' }, '127.0.0.1', 'all private: socket'],
    [{ 'x-real-ip': '::1', 'x-forwarded-for': 'fe80::1, fc00::2' }, '127.0.0.1', 'IPv6 loopback, link-local and unique-local skipped'],
    [{ 'x-real-ip': '2606:4700:4700::1111' }, '2606:4700:4700::1111', 'public IPv6 as sent'],
    [{ 'x-real-ip': '[2606:4700:4700::1111]:443' }, '2606:4700:4700:0:0:0:0:1111', 'brackets and port removed'],
    [{ 'x-real-ip': '::ffff:8.8.4.4' }, '8.8.4.4', 'IPv4-mapped shown as IPv4'],
    [{ 'x-real-ip': '::ffff:10.0.0.1', 'x-forwarded-for': '8.8.4.4:1234' }, '8.8.4.4', 'mapped private skipped; port stripped'],
    [{ 'x-real-ip': '203.0.113.5' }, '127.0.0.1', 'documentation range is not public'],
    [{ 'x-real-ip': 'x'.repeat(300) }, '127.0.0.1', 'garbage header']
  ]
  for (const [headers, want, why] of cases) {
    const r = await fetch(`${base}/ip`, { headers })
    t.same(await r.json(), { stored: want, get: want }, why)
  }
  const helper = await fetch(`${base}/helper`, { headers: { 'x-forwarded-for': '9.9.9.9' } })
  t.same(await helper.json(), { get: '9.9.9.9' }, 'realIp(request) works without the plugin')

  const untrusted = await fetch(`${base}/hooked`, { headers: { 'x-real-ip': '8.8.8.8' } })
  t.same(await untrusted.json(), { stored: '127.0.0.1' }, 'hook form; headers ignored from an untrusted peer')
})

t.test('realIp with trusted proxies believes them', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(realIpPlugin, { trustedProxies: ['127.0.0.1'] })
    app.get('/ip', async (req) => req.realIp)
  })
  t.teardown(() => app.close())
  t.equal(await (await fetch(`${base}/ip`, { headers: { 'x-real-ip': '8.8.8.8' } })).text(), '8.8.8.8')
  const bad = Fastify()
  await t.rejects(async () => { await bad.register(realIpPlugin, { trustedProxies: ['nope'] }).ready() }, { code: 'GATEHOUSE_OPTION', option: 'realIp.trustedProxies' })
  await bad.close()
  const bad2 = Fastify()
  await t.rejects(async () => { await bad2.register(realIpPlugin, { trustedProxies: '127.0.0.1' as never }).ready() }, { code: 'GATEHOUSE_OPTION', option: 'realIp.trustedProxies' })
  await bad2.close()
  t.throws(() => realIpHook({ trustedProxies: ['10.0.0.0/99'] }), { code: 'GATEHOUSE_OPTION', option: 'realIp.trustedProxies' })
})
