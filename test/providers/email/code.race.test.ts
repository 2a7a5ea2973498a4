/**
 * An e-mail code is one-time under a race too: the right code sent twice at once (a double click, or a thief who
 * read the mail at the same moment) signs in once. The state store has a network's latency here
 * (test/helpers/latency-store.ts), so that the two requests read the pending code before either takes it.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { emailProvider } from '../../../index.js'
import { latencyStore } from '../../helpers/latency-store.js'

t.test('the right code sent twice at once signs in once', async (t) => {
  const outbox: string[] = []
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: () => 'email-code-race-secret-0123456789-0123456789', url: 'http://127.0.0.1', stateStore: latencyStore() })
  await app.register(emailProvider, { name: 'email', template: 'Your sign-in code: {{.Code}}', code: true, sender: (_address: string, text: string) => { outbox.push(text) } })
  for (let round = 0; round < 5; round++) {
    const sent = await app.inject(`/auth/email/login?user=ann&address=ann${round}%40example.com`)
    t.equal(sent.statusCode, 200)
    const code = /code: ([0-9]+)$/.exec(outbox.at(-1)!)![1]!
    const enter = async () => await app.inject({ method: 'POST', url: '/auth/email/login', payload: { address: `ann${round}@example.com`, code } })
    const answers = await Promise.all([enter(), enter()])
    const sessions = answers.filter((r) => r.cookies.some((c) => c.name === 'JWT' && c.value !== ''))
    t.equal(sessions.length, 1, `round ${round}: one session`)
    t.ok(answers.some((r) => r.statusCode >= 400 && r.statusCode < 500), `round ${round}: the other is refused`)
  }
})
