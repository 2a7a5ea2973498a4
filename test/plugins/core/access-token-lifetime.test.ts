/**
 * A registered client's access-token lifetime (`clients[].accessToken.maxAge`, issue 49 item 7): its access tokens
 * carry it (`exp - iat`, `expires_in`) on the first pair and on every refresh, and die with it; a client without it
 * gets `session.tokenDuration`. Bad values fail the registration naming the option. The clock is a fake one.
 */
import t from 'tap'
import Fastify from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, OptionsError } from '../../../index.js'
import { clientsApp, CLIENTS_SECRET } from '../../helpers/clients-app.js'

const clock = FakeTimers.install({ now: Date.UTC(2026, 0, 5, 9, 0, 0), toFake: ['Date'] })
t.teardown(() => clock.uninstall())
const s = await clientsApp({
  session: { tokenDuration: '5m' },
  clients: [
    { id: 'short', kind: 'native', redirectUris: ['com.example.app:/callback'], accessToken: { maxAge: '2m' } },
    { id: 'plain', kind: 'native', redirectUris: ['com.example.app:/callback'] }
  ]
})
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function lifetimeOf (token: string): Promise<number> {
  const claims = await s.app.auth.tokens.parse(token)
  return claims.exp - claims.iat
}
const call = async (token: string): Promise<number> => (await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${token}` } })).statusCode

t.test('a client\'s access tokens live its accessToken.maxAge, first pair and refreshed alike', async (t) => {
  const pair = await s.pair('ann', 'short')
  t.equal(pair.expires_in, 120)
  t.equal(await lifetimeOf(pair.access_token), 120, 'exp - iat')
  const refreshed = await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'short', refresh_token: pair.refresh_token }).toString() })
  t.equal(refreshed.statusCode, 200)
  t.equal(refreshed.json().expires_in, 120, 'a refresh answers the same lifetime')
  t.equal(await lifetimeOf(refreshed.json().access_token), 120)
})

t.test('without it, session.tokenDuration; and each token dies at its own exp', async (t) => {
  const short = await s.pair('bob', 'short')
  const plain = await s.pair('bob', 'plain')
  t.equal(plain.expires_in, 300)
  t.equal(await lifetimeOf(plain.access_token), 300)
  clock.tick(121_000)
  t.equal(await call(short.access_token), 401, 'the short client\'s token is expired after 2 minutes')
  t.equal(await call(plain.access_token), 200, 'the other client\'s still serves')
  clock.tick(180_000)
  t.equal(await call(plain.access_token), 401, 'and expires after 5')
})

t.test('bad values fail the registration, naming the option', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ maxAge: '5s' }, 'clients[0].accessToken.maxAge'],
    [{ maxAge: '2d' }, 'clients[0].accessToken.maxAge'],
    [{ maxAge: 'soon' }, 'clients[0].accessToken.maxAge'],
    [{ maxAge: -1 }, 'clients[0].accessToken.maxAge'],
    [{ lifetime: '1m' }, 'clients[0].accessToken.lifetime'],
    ['1m', 'clients[0].accessToken']
  ]
  for (const [accessToken, option] of cases) {
    const app = Fastify()
    app.register(authPlugin, { secret: CLIENTS_SECRET, url: 'http://127.0.0.1', clients: [{ id: 'a', kind: 'device', accessToken } as never] })
    const err = await app.ready().then(() => undefined, (e: unknown) => e)
    t.type(err, OptionsError, JSON.stringify(accessToken))
    t.equal((err as OptionsError).option, option, JSON.stringify(accessToken))
    await app.close()
  }
  const longer = Fastify()
  longer.register(authPlugin, { secret: CLIENTS_SECRET, url: 'http://127.0.0.1', clients: [{ id: 'a', kind: 'device', refreshToken: { maxAge: '10m' }, accessToken: { maxAge: '20m' } }] })
  const err = await longer.ready().then(() => undefined, (e: unknown) => e)
  t.equal((err as OptionsError).option, 'clients[0].accessToken.maxAge', 'no longer than the family')
  t.match((err as Error).message, /no longer than refreshToken\.maxAge/)
  await longer.close()
})
