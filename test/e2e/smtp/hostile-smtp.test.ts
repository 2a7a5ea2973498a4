/**
 * Hostile and refusing mail servers, real ones on loopback: a relay that refuses our recipients or our sender
 * on policy grounds (naming its internal host in the reply), and a server that trickles its answer a byte at
 * a time, which no idle timeout ever catches. Each is a bounded-time JSON error with its code that names the
 * kind of peer only, with the full cause logged once; the trickling connection is closed by us.
 */
import t from 'tap'
import { once } from 'node:events'
import { createServer, type Socket } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { authPlugin } from '../../../auth.js'
import { SmtpSender, verifyProvider } from '../../../providers/index.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { client, listen } from '../../helpers/client.js'

const RELAY_REPLY = '5.7.1 relaying denied for internal-relay.corp.local'
const relay = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onMailFrom: (addr, _s, cb) => {
    if (addr.address.startsWith('bounce@')) return cb(Object.assign(new Error('5.7.1 sender rejected by policy at mx1.corp.local'), { responseCode: 553 }))
    cb()
  },
  onRcptTo: (_addr, _s, cb) => cb(Object.assign(new Error(RELAY_REPLY), { responseCode: 554 })),
  onData: (stream, _s, cb) => { stream.resume(); stream.on('end', () => cb()) }
})
relay.on('error', () => {})
relay.listen(0, '127.0.0.1')
await once(relay.server, 'listening')
const relayPort = (relay.server.address() as { port: number }).port
t.teardown(() => new Promise<void>((resolve) => relay.close(() => resolve())))

// Greets properly, then answers EHLO one byte every 200 ms, for ever: every byte resets an idle timer.
const trickleSockets = new Set<Socket>()
const trickler = createServer((socket) => {
  trickleSockets.add(socket)
  let timer: NodeJS.Timeout | undefined
  socket.on('error', () => {})
  socket.once('close', () => { clearInterval(timer); trickleSockets.delete(socket) })
  socket.write('220 trickle.corp.local ESMTP\r\n')
  socket.once('data', () => { timer = setInterval(() => socket.write('2'), 200) })
})
trickler.listen(0, '127.0.0.1')
await once(trickler, 'listening')
const tricklePort = (trickler.address() as { port: number }).port
t.teardown(() => new Promise<void>((resolve) => { for (const s of trickleSockets) s.destroy(); trickler.close(() => resolve()) }))

const logs: string[] = []
const senders: SmtpSender[] = []
const smtp = (port: number, from = 'Gatehouse <no-reply@example.com>'): SmtpSender => {
  const s = new SmtpSender({ host: '127.0.0.1', port, from, timeout: '10s' })
  senders.push(s)
  return s
}
const SEND_TIMEOUT_MS = 500
const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, { secret: () => 'hostile-smtp-secret-0123456789-0123456789', url: 'http://127.0.0.1', logger: funcLogger((l) => logs.push(l)) })
  await app.register(verifyProvider, { name: 'relay', template: 'token {{.Token}}', sender: smtp(relayPort) })
  await app.register(verifyProvider, { name: 'bounce', template: 'token {{.Token}}', sender: smtp(relayPort, 'bounce@example.com') })
  await app.register(verifyProvider, { name: 'trickle', template: 'token {{.Token}}', sender: smtp(tricklePort), sendTimeout: SEND_TIMEOUT_MS })
})
t.teardown(async () => { await app.close(); for (const s of senders) s.close() })

const MAIL_FAILED = { error: 'mail server failed', details: 'the confirmation message could not be sent', code: 'GATEHOUSE_UPSTREAM' }

for (const [name, what, reply] of [
  ['relay', 'a recipient refused on policy grounds (relaying denied)', RELAY_REPLY],
  ['bounce', 'our sender refused at MAIL FROM', '5.7.1 sender rejected by policy at mx1.corp.local']
] as const) {
  t.test(`${what}: 502 naming the mail server, nothing of its reply; the reply logged once`, async (t) => {
    const mark = logs.length
    const r = await client(base).fetch(`/auth/${name}/login?user=a&address=a@example.com`)
    // 502 "failed" (not the deadline's 503), logged once below: answered on the refusal, not retried until a timeout.
    t.equal(r.status, 502)
    const text = await r.text()
    t.same(JSON.parse(text), MAIL_FAILED)
    t.notMatch(text, /corp\.local|relay|127\.0\.0\.1|5\.7\.1|55\d/, 'nothing of the peer in the body')
    const logged = logs.slice(mark).filter((l) => l.includes('send failed'))
    t.equal(logged.length, 1, 'logged once')
    t.match(logged[0], new RegExp(`\\[WARN\\] verified provider ${name}: send failed \\(failed\\): SMTP 127\\.0\\.0\\.1:${relayPort}: .*${reply.replace(/\./g, '\\.')}`))
  })
}

t.test('a mail server trickling its answer: 503 at the send deadline, and its connection closed by us', async (t) => {
  const mark = logs.length
  const started = performance.now()
  const r = await client(base).fetch('/auth/trickle/login?user=a&address=a@example.com')
  const took = Math.round(performance.now() - started)
  t.equal(r.status, 503)
  t.same(await r.json(), { error: 'mail server unavailable', details: 'the confirmation message could not be sent now; try again later', code: 'GATEHOUSE_UNAVAILABLE' })
  // A lower bound only (load makes it later, never earlier); the log line names the deadline that ended it.
  t.ok(took >= SEND_TIMEOUT_MS - 20, `answered at the deadline (${took} ms for ${SEND_TIMEOUT_MS} ms)`)
  t.match(logs.slice(mark), [/send failed \(unavailable\): .*(no answer within 500 ms|stopped at the send deadline)/])
  // The idle timeout (10 s) never fires while bytes trickle in: only the deadline's abort closes the socket (were
  // it left open, this would wait for ever and the test fail on its time limit).
  await Promise.all([...trickleSockets].map(async (s) => { if (!s.destroyed) await once(s, 'close') }))
  t.equal(trickleSockets.size, 0, 'the connection is closed by us')
})
