/**
 * The device-code guessing caps cannot be turned into a lever (issue 43, item 7): wrong codes count per signed-in
 * account too, so one account on many addresses is stopped at 20; and past the cap of wrong codes in all, a user
 * with no wrong code of their own still gets in with the right one, while a guesser is refused from its first wrong
 * code on.
 */
import t from 'tap'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { clientsApp } from '../../helpers/clients-app.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const store = new MemoryStateStore()
const s = await clientsApp({ stateStore: store })
t.teardown(s.close)

async function signedIn (name: string): Promise<{ cookie: string; xsrf: string }> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  const jar = Object.fromEntries(r.cookies.map((c) => [c.name, c.value]))
  return { cookie: `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`, xsrf: jar['XSRF-TOKEN']! }
}

async function decide (user: { cookie: string; xsrf: string }, code: string, ip: string): Promise<number> {
  const r = await s.app.inject({
    method: 'POST',
    url: '/auth/device',
    remoteAddress: ip,
    headers: { ...FORM, cookie: user.cookie, origin: s.base, 'sec-fetch-site': 'same-origin' },
    payload: new URLSearchParams({ user_code: code, action: 'approve', xsrf: user.xsrf }).toString()
  })
  return r.statusCode
}

const newCode = async (): Promise<string> => (await s.app.inject({ method: 'POST', url: '/auth/device/code', headers: FORM, payload: 'client_id=cli' })).json().user_code
const wrongCode = (i: number): string => `BCDF-${'GHJKLMNPQR'[Math.floor(i / 10) % 10]!}${'GHJKLMNPQR'[i % 10]!}ZZ`

t.test('one account on many addresses: its 21st try is refused, right code or not; others are not', async (t) => {
  const mallory = await signedIn('mallory')
  for (let i = 0; i < 20; i++) t.equal(await decide(mallory, wrongCode(i), `10.1.${i}.1`), 400, `wrong code ${i + 1} from a new address`)
  const code = await newCode()
  t.equal(await decide(mallory, code, '10.1.99.1'), 429, 'the account is capped, from a new address too, even for the right code')
  t.equal(await decide(mallory, wrongCode(50), '10.1.98.1'), 429)
  const page = await s.app.inject({ url: `/auth/device?user_code=${code}`, headers: { cookie: mallory.cookie }, remoteAddress: '10.1.97.1' })
  t.equal(page.statusCode, 429, 'the page\'s look-up is a guess like a decision')
  t.equal(await decide(await signedIn('ann'), code, '10.1.0.1'), 200, 'another account approves, from an address mallory used')
})

t.test('past 1,000 wrong codes in all: a user without a wrong code gets in; the first wrong code puts a requester under the cap', async (t) => {
  for (let i = Number(await store.get('dc-guess:*') ?? 0); i < 1000; i++) await store.increment('dc-guess:*', 600_000)
  const bob = await signedIn('bob')
  t.equal(await decide(bob, await newCode(), '10.2.0.1'), 200, 'the right code, first try: approved under the full cap')
  const page = await s.app.inject({ url: `/auth/device?user_code=${await newCode()}`, headers: { cookie: bob.cookie }, remoteAddress: '10.2.0.2' })
  t.equal(page.statusCode, 200, 'the page names the client too')
  t.match(page.body, /id="asking"/)

  const cy = await signedIn('cy')
  t.equal(await decide(cy, wrongCode(7), '10.2.1.1'), 400, 'a wrong code is looked up once')
  t.equal(await decide(cy, await newCode(), '10.2.1.2'), 429, 'then the account is under the full cap, from any address')
  const dee = await signedIn('dee')
  t.equal(await decide(dee, await newCode(), '10.2.1.1'), 429, 'and so is the address, for any account')
  t.equal(await decide(dee, await newCode(), '10.2.2.1'), 200, 'a clean account on a clean address still gets in')
})
