/**
 * Test helper: the refresh-family scenario across two instances sharing one state store (a Redis server, a
 * Cluster or a Sentinel setup): a pair issued on A is rotated on B, both serve the new access token, the rotated
 * refresh token presented to A is refused as a reuse, the family's access token is refused at once on both (B had
 * it in its verified-session cache), and the family's current refresh token is dead on B too.
 */
import type { Test } from 'tap'
import * as oidc from 'openid-client'
import { clientsApp } from './clients-app.js'

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

export async function familyAcrossInstances (t: Test, stateStore: string): Promise<void> {
  const a = await clientsApp({ stateStore })
  const b = await clientsApp({ stateStore })
  t.teardown(async () => { await a.close(); await b.close() })
  const onA = await a.discover()
  const onB = await b.discover()
  const first = await a.pair('ann')
  const second = await oidc.refreshTokenGrant(onB, first.refresh_token)
  t.not(second.refresh_token, first.refresh_token, 'B rotated the refresh token A issued')
  t.equal((await b.app.inject({ url: '/private', headers: bearer(second.access_token) })).statusCode, 200, 'B serves the refreshed token (and caches it)')
  t.equal((await a.app.inject({ url: '/private', headers: bearer(second.access_token) })).statusCode, 200, 'and so does A')

  const err = await oidc.refreshTokenGrant(onA, first.refresh_token).then(() => undefined, (e: unknown) => e)
  t.equal((err as oidc.ResponseBodyError).error, 'invalid_grant', 'the rotated token presented to A is refused')
  t.ok(a.events.some((e) => e.type === 'token.reuse_detected' && e.familyEnded === true), 'A audits the reuse')
  for (const [name, app] of [['A', a], ['B', b]] as const) {
    const r = await app.app.inject({ url: '/private', headers: bearer(second.access_token) })
    t.equal(r.statusCode, 401, `${name} refuses the family's access token at once`)
    t.equal(r.json().code, 'GATEHOUSE_SESSION_REVOKED')
  }
  const again = await oidc.refreshTokenGrant(onB, second.refresh_token!).then(() => undefined, (e: unknown) => e)
  t.equal((again as oidc.ResponseBodyError).error, 'invalid_grant', 'the current token is dead on B too')
}
