/**
 * The publishing itself: the `gatehouse:audit` channel gets what `onEvent` gets; a throwing or rejecting `onEvent`
 * is logged and never fails the request; nothing is built while nobody listens; e-mail masking; the option.
 */
import t from 'tap'
import diagnostics from 'node:diagnostics_channel'
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'
import { AUDIT_CHANNEL, AUDIT_EVENT_TYPES, type AuditEvent } from '../../../lib/audit/events.js'
import { maskAddress } from '../../../lib/audit/audit.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { checkAuditEvent } from '../../helpers/secret-check.js'
import { auditApp, PASSWORDS, SECRET, signIn, typesOf } from './app.js'

t.test('the channel carries the same events as onEvent, of every instance', async (t) => {
  const heard: AuditEvent[] = []
  const listen = (e: unknown): void => { heard.push(e as AuditEvent) }
  diagnostics.subscribe(AUDIT_CHANNEL, listen)
  t.teardown(() => { diagnostics.unsubscribe(AUDIT_CHANNEL, listen) })
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const jar = await signIn(app)
  await jar.inject(app, { method: 'GET', url: '/auth/logout' })
  t.same(typesOf(events), ['login.succeeded', 'session.revoked', 'logout'])
  t.equal(heard.length, 3)
  t.equal(heard[0], events[0], 'the same frozen object')
})

t.test('a throwing or rejecting onEvent is logged; the request answers as usual', async (t) => {
  const lines: string[] = []
  for (const onEvent of [() => { throw new Error('siem down') }, async () => { throw new Error('siem down') }]) {
    const app = Fastify()
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: 'http://127.0.0.1',
      logger: funcLogger((line) => { lines.push(line) }),
      onEvent,
      providers: [{ kind: 'direct', name: 'local', checker: (u, p) => PASSWORDS[u] === p }]
    })
    t.teardown(() => app.close())
    const res = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: PASSWORDS.alice } })
    t.equal(res.statusCode, 200)
    t.equal(res.json().name, 'alice')
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.equal(lines.filter((l) => l.includes('onEvent failed on login.succeeded: siem down')).length, 2, lines.join('\n'))
})

t.test('onEvent must be a function', async (t) => {
  const app = Fastify()
  app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', onEvent: 'log' as never })
  await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option: 'onEvent' })
})

t.test('nobody listening: no event is built, whatever the requests decide', async (t) => {
  // The suite's secret check listens in every test process: off for this test.
  diagnostics.unsubscribe(AUDIT_CHANNEL, checkAuditEvent)
  t.teardown(() => { diagnostics.subscribe(AUDIT_CHANNEL, checkAuditEvent) })
  t.notOk(diagnostics.channel(AUDIT_CHANNEL).hasSubscribers)
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'http://127.0.0.1',
    rateLimit: { failures: { perAccount: 1, perIp: 0 } },
    providers: [{ kind: 'direct', name: 'local', checker: (u, p) => PASSWORDS[u] === p }]
  })
  app.get('/private', { preHandler: app.auth.authenticate }, async () => 'ok')
  t.teardown(() => app.close())
  const audit = coreOf(app).options.audit
  t.equal(audit.on, false)
  const ok = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: PASSWORDS.alice } })
  const cookies = Object.fromEntries(ok.cookies.map((c) => [c.name, c.value]))
  const headers = { cookie: `JWT=${cookies.JWT}; XSRF-TOKEN=${cookies['XSRF-TOKEN']}`, 'x-xsrf-token': cookies['XSRF-TOKEN']! }
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: '/private', headers })).statusCode, 200)
  t.equal((await app.inject({ url: '/private', headers: { cookie: headers.cookie } })).statusCode, 401)
  for (let i = 0; i < 2; i++) await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'bob', passwd: 'guess' } })
  await app.inject({ url: '/auth/logout', headers: { origin: 'https://evil.example' } })
  await app.inject({ url: '/auth/logout', headers })
  t.equal(audit.built, 0, 'not one event object')
  // The same requests with a listener do build them: the count above would have seen them.
  const listen = (): void => {}
  diagnostics.subscribe(AUDIT_CHANNEL, listen)
  t.teardown(() => { diagnostics.unsubscribe(AUDIT_CHANNEL, listen) })
  await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: PASSWORDS.alice } })
  t.equal(audit.built, 1)
})

t.test('maskAddress keeps the first character and the domain only', async (t) => {
  t.equal(maskAddress('alice.smith@example.com'), 'a…@example.com')
  t.equal(maskAddress('+15551234567'), '+…')
  t.equal(maskAddress(''), '…')
})

t.test('the catalogue lists every type once, and docs/reference/events.md has a section for each, in that order', async (t) => {
  t.equal(new Set(AUDIT_EVENT_TYPES).size, AUDIT_EVENT_TYPES.length)
  t.equal(AUDIT_EVENT_TYPES.length, 33)
  const page = readFileSync(new URL('../../../docs/reference/events.md', import.meta.url), 'utf8')
  const headings = [...page.matchAll(/^## (\S+)$/gm)].map((m) => m[1]).filter((h) => (AUDIT_EVENT_TYPES as readonly string[]).includes(h!))
  t.same(headings, AUDIT_EVENT_TYPES)
})
