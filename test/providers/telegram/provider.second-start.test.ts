/**
 * A second `/start` on a login request that is already confirmed does not re-confirm it for the second Telegram
 * user: the bot answers the error message, and the browser that asked signs in as the first user.
 */
import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { userId } from '../../../lib/user.js'
import { client, listen } from '../../helpers/client.js'
import { BOT_TOKEN, BotApiStandIn } from '../../helpers/bot-api-standin.js'

const api = new BotApiStandIn()
await api.start()
t.teardown(() => api.stop())
const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, { secret: () => 'second-start-secret-0123456789abcdef', url: 'http://127.0.0.1' })
  app.auth.addTelegramProvider({ token: BOT_TOKEN, apiUrl: api.url, successMsg: 'ok', errorMsg: 'bad link', retryDelay: '20ms', avatar: false })
})
t.teardown(() => app.close())
await api.polling()

const ada = { id: 4242, is_bot: false, first_name: 'Ada' }
const eve = { id: 666, is_bot: false, first_name: 'Eve' }

async function press (user: typeof ada, text: string): Promise<string> {
  const answer = api.nextMessage()
  api.say(user, text)
  return (await answer).text
}

t.test('a second start on a confirmed login is refused; the login stays the first user\'s', async (t) => {
  const c = client(base)
  const { token } = await (await c.fetch('/auth/telegram/login')).json() as { token: string }
  t.equal(await press(ada, `/start ${token}`), 'ok', 'Ada confirms')
  t.equal(await press(eve, `/start ${token}`), 'bad link', 'Eve, pressing the same link, is told it is bad')
  const r = await c.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(r.status, 200)
  const user = await r.json() as { id: string; name: string }
  t.equal(user.id, userId('telegram', String(ada.id)), 'signed in as Ada, not Eve')
  t.equal(user.name, 'Ada')
})
