/**
 * Two refresh grants racing with one refresh token on two instances that share a real Redis (each instance gets one
 * of the two requests at the same moment): at most one of them gets a pair, the other is refused as a reuse, and the
 * family ends on both instances: the pair handed out, if any, and the family's access tokens are refused.
 */
import t from 'tap'
import { redisForTests } from '../../helpers/redis-server.js'
import { clientsApp, type ClientsApp } from '../../helpers/clients-app.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function refresh (s: ClientsApp, token: string): Promise<{ status: number; body: Record<string, string> }> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: token }).toString() })
  return { status: r.statusCode, body: r.json() }
}
const privateStatus = async (s: ClientsApp, access: string): Promise<number> =>
  (await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${access}` } })).statusCode

const redis = await redisForTests(t, 'refresh races on Redis')
if (redis !== undefined) {
  t.test('two instances refreshing one token at once: at most one pair, and the family ends on both', async (t) => {
    const a = await clientsApp({ stateStore: redis.url })
    const b = await clientsApp({ stateStore: redis.url })
    t.teardown(async () => { await a.close(); await b.close() })
    for (let round = 0; round < 10; round++) {
      const pair = await a.pair(`racer${round}`)
      const answers = await Promise.all([refresh(a, pair.refresh_token), refresh(b, pair.refresh_token)])
      const granted = answers.filter((r) => r.status === 200)
      t.ok(granted.length <= 1, `round ${round}: at most one pair (${granted.length})`)
      t.ok(answers.some((r) => r.status === 400 && r.body.error === 'invalid_grant'), `round ${round}: the other is refused`)
      for (const g of granted) {
        t.equal((await refresh(b, g.body.refresh_token!)).body.error, 'invalid_grant', `round ${round}: the pair handed out is dead`)
        for (const s of [a, b]) t.equal(await privateStatus(s, g.body.access_token!), 401, `round ${round}: its access token is refused`)
      }
      for (const s of [a, b]) t.equal(await privateStatus(s, pair.access_token), 401, `round ${round}: the first access token is refused`)
    }
  })
}
