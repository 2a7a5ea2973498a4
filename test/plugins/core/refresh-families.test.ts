/**
 * Refresh families at their edges (RFC 9700 §4.14.2): two refresh grants racing with one token get at most one
 * pair between them and end the family; a rotated refresh token revoked (RFC 7009) ends the family it belonged to,
 * the current token and the access tokens included. The race on a shared Redis is in
 * test/e2e/redis/refresh-race.test.ts.
 */
import t from 'tap'
import { clientsApp } from '../../helpers/clients-app.js'
import { latencyStore } from '../../helpers/latency-store.js'

// A store with a network's latency (test/helpers/latency-store.ts): requests sent together interleave as on Redis.
const s = await clientsApp({ stateStore: latencyStore() })
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function refresh (token: string): Promise<{ status: number; body: Record<string, string> }> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: token }).toString() })
  return { status: r.statusCode, body: r.json() }
}
const privateStatus = async (access: string): Promise<number> =>
  (await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${access}` } })).statusCode

t.test('two refreshes racing with one token: at most one pair, and the family ends', async (t) => {
  for (let round = 0; round < 5; round++) {
    const pair = await s.pair(`racer${round}`)
    const answers = await Promise.all([refresh(pair.refresh_token), refresh(pair.refresh_token)])
    const granted = answers.filter((a) => a.status === 200)
    t.ok(granted.length <= 1, `round ${round}: at most one pair (${granted.length})`)
    t.ok(answers.some((a) => a.status === 400 && a.body.error === 'invalid_grant'), `round ${round}: the other is refused`)
    for (const g of granted) {
      t.equal((await refresh(g.body.refresh_token!)).body.error, 'invalid_grant', `round ${round}: the pair handed out is dead too`)
      t.equal(await privateStatus(g.body.access_token!), 401, `round ${round}: its access token is refused`)
    }
    t.equal(await privateStatus(pair.access_token), 401, `round ${round}: the family's first access token is refused`)
  }
  t.ok(s.events.some((e) => e.type === 'token.reuse_detected' && e.clientId === 'mobile' && e.familyEnded === true), 'audited as a reuse')
})

t.test('revoking a rotated refresh token ends its family: the current token and the access tokens die', async (t) => {
  const first = await s.pair('rita')
  const next = await refresh(first.refresh_token)
  t.equal(next.status, 200)
  t.equal(await privateStatus(next.body.access_token!), 200, 'the rotated-to pair works')
  const revoked = await s.app.inject({ method: 'POST', url: '/auth/revoke', headers: FORM, payload: new URLSearchParams({ client_id: 'mobile', token: first.refresh_token }).toString() })
  t.equal(revoked.statusCode, 200)
  t.ok(s.events.some((e) => e.type === 'token.revoked' && e.clientId === 'mobile'), 'audited as a revocation')
  const after = await refresh(next.body.refresh_token!)
  t.equal(after.status, 400)
  t.equal(after.body.error, 'invalid_grant', 'the family\'s current refresh token is refused')
  t.equal(await privateStatus(next.body.access_token!), 401, 'its access token is refused at once')

  const other = await s.pair('rita')
  const rotated = await refresh(other.refresh_token)
  const foreign = await s.app.inject({ method: 'POST', url: '/auth/revoke', headers: FORM, payload: new URLSearchParams({ client_id: 'cli', token: other.refresh_token }).toString() })
  t.equal(foreign.statusCode, 200, 'another client revoking it answers 200 too…')
  t.equal((await refresh(rotated.body.refresh_token!)).status, 200, '…and ends nothing: a rotated token is looked up under its own client only')
})
