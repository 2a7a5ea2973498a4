/**
 * The token endpoints' address lockout (`rateLimit.grants`): a flood of refused requests at `POST /auth/token` or
 * `/auth/revoke` from one address is answered 429 in RFC 6749's shape with `Retry-After`, audited, and consumes
 * nothing; another address, and a device polling as RFC 8628 asks, are not affected.
 */
import t from 'tap'
import { clientsApp } from '../../helpers/clients-app.js'

const PER_IP = 5
const s = await clientsApp({ rateLimit: { grants: { perIp: PER_IP } } })
t.teardown(s.close)

const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString()
async function post (path: string, fields: Record<string, string>, remoteAddress: string) {
  return await s.app.inject({ method: 'POST', url: `/auth/${path}`, remoteAddress, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form(fields) })
}
const refresh = (token: string, from: string) => post('token', { grant_type: 'refresh_token', client_id: 'mobile', refresh_token: token }, from)

t.test('a flood of bad grants from one address is locked out; a good client elsewhere is not', async (t) => {
  const good = await s.pair('gina')
  const mine = await s.pair('mallory')
  for (let i = 0; i < PER_IP; i++) {
    const r = await refresh(`guess-${i}-${'x'.repeat(40)}`, '10.0.0.1')
    t.equal(r.statusCode, 400, `guess ${i + 1} is refused as a grant`)
    t.equal(r.json().error, 'invalid_grant')
  }
  const locked = await refresh('guess-last', '10.0.0.1')
  t.equal(locked.statusCode, 429)
  t.match(locked.json(), { error: 'too_many_requests', error_description: /too many refused token requests/, code: 'GATEHOUSE_RATE_LIMITED' })
  t.ok(Number(locked.headers['retry-after']) >= 1, 'Retry-After says when')
  t.equal(locked.headers['cache-control'], 'no-store')
  t.ok(s.events.some((e) => e.type === 'rate_limited' && e.reason === 'token_requests'), 'audited')

  // Locked: even a good grant from that address is not run, so its refresh token is not consumed.
  const refusedGood = await refresh(mine.refresh_token, '10.0.0.1')
  t.equal(refusedGood.statusCode, 429)
  const fromElsewhere = await refresh(mine.refresh_token, '10.0.0.9')
  t.equal(fromElsewhere.statusCode, 200, 'the refresh token refused 429 was not consumed')

  const other = await refresh(good.refresh_token, '10.0.0.2')
  t.equal(other.statusCode, 200, 'a good client from another address is not affected')
  t.equal(other.json().token_type, 'Bearer')
})

t.test('/revoke: a flood of unknown tokens from one address is locked out (each still answered 200 until then)', async (t) => {
  for (let i = 0; i < PER_IP; i++) {
    const r = await post('revoke', { client_id: 'mobile', token: `unknown-${i}` }, '10.0.1.1')
    t.equal(r.statusCode, 200, 'RFC 7009: an unknown token answers 200')
  }
  const locked = await post('revoke', { client_id: 'mobile', token: 'unknown-last' }, '10.0.1.1')
  t.equal(locked.statusCode, 429)
  t.equal(locked.json().error, 'too_many_requests')
  const pair = await s.pair('rhea')
  const r = await post('revoke', { client_id: 'mobile', token: pair.refresh_token }, '10.0.1.2')
  t.equal(r.statusCode, 200)
  t.equal((await refresh(pair.refresh_token, '10.0.1.3')).json().error, 'invalid_grant', 'the revocation from another address took effect')
})

t.test('malformed requests count too: unknown client, unsupported grant, JSON body', async (t) => {
  const bad = [
    () => post('token', { grant_type: 'refresh_token', client_id: 'nobody', refresh_token: 'x' }, '10.0.2.1'),
    () => post('token', { grant_type: 'password', client_id: 'mobile' }, '10.0.2.1'),
    async () => await s.app.inject({ method: 'POST', url: '/auth/token', remoteAddress: '10.0.2.1', payload: { grant_type: 'refresh_token' } })
  ]
  for (let i = 0; i < PER_IP; i++) t.not((await bad[i % bad.length]!()).statusCode, 429)
  t.equal((await bad[0]!()).statusCode, 429)
})

t.test('a device polling too fast is answered slow_down, never locked out', async (t) => {
  const started = await post('device/code', { client_id: 'cli' }, '10.0.3.1')
  const deviceCode = started.json().device_code as string
  const answers = new Set<string>()
  for (let i = 0; i < PER_IP * 3; i++) {
    const r = await post('token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'cli', device_code: deviceCode }, '10.0.3.1')
    t.equal(r.statusCode, 400)
    answers.add(r.json().error)
  }
  t.same([...answers].sort(), ['authorization_pending', 'slow_down'])
})
