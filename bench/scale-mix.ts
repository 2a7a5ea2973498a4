/**
 * The mixed load of the scale benchmark (bench/scale.ts): users coming and going on every instance at once, as
 * they would behind a load balancer without sticky sessions, on instances whose tokens live
 * `SHORT_TOKEN_MS` so that sessions refresh while they are used. Each user loop signs in (three password
 * logins for every dev OAuth2 and e-mail login), makes up to `REQUESTS_PER_SESSION` authenticated requests,
 * each on the next instance, keeping the cookies every answer sets (a refresh replaces the session cookie), and
 * logs out; meanwhile a sampler measures how long a logout takes to be refused on another instance under that
 * load. Also the revocation sample itself, which bench/scale.ts takes on idle instances too.
 */
import { Browser, base, emailLogin, oauth2Login, passwordLogin } from './scale-client.js'
import type { ServerProcess } from './server-process.js'

/** Token lifetime of the instances the mix and the refresh phase run on. */
export const SHORT_TOKEN_MS = 1000
const MIX_USERS = 24
const REQUESTS_PER_SESSION = 300
const KINDS = ['password', 'password', 'password', 'oauth2', 'email'] as const

/** What the mix did in its time: operations of each kind, the requests' latencies, the revocation samples. */
export interface MixTally {
  password: number; oauth2: number; email: number; requests: number; refreshes: number; logouts: number
  requestMs: number[]; revocationMs: number[]
}

/** Logout on the first instance, the session seen on the last: ms until the last refuses it. */
export async function revocationSample (servers: ServerProcess[], user: string): Promise<number> {
  const [first, last] = [servers[0]!, servers[servers.length - 1]!]
  const browser = await passwordLogin(first, user)
  const headers = browser.headers()
  const seen = await fetch(`${base(last)}/private`, { headers })
  await seen.arrayBuffer()
  if (seen.status !== 200) throw new Error(`a fresh session answered ${seen.status}`)
  const start = process.hrtime.bigint()
  const out = await fetch(`${base(first)}/auth/logout`, { headers })
  await out.arrayBuffer()
  if (out.status !== 200) throw new Error(`logout answered ${out.status}`)
  for (let tries = 0; ; tries++) {
    const r = await fetch(`${base(last)}/private`, { headers })
    await r.arrayBuffer()
    if (r.status === 401) return Number(process.hrtime.bigint() - start) / 1e6
    if (r.status !== 200) throw new Error(`a revoked session answered ${r.status}`)
    if (tries > 10_000) throw new Error('the revocation never reached the other instance')
  }
}

async function signIn (servers: ServerProcess[], n: number, at: number, user: string): Promise<Browser> {
  const [home, next] = [servers[at % n]!, servers[(at + 1) % n]!]
  switch (KINDS[at % KINDS.length]!) {
    case 'password': return await passwordLogin(home, user)
    case 'oauth2': return await oauth2Login(home)
    case 'email': return await emailLogin(home, next, user)
  }
}

async function userLoop (servers: ServerProcess[], loop: number, until: number, tally: MixTally, tag: string): Promise<void> {
  const n = servers.length
  for (let k = 0; Date.now() < until; k++) {
    const at = loop + k
    const browser = await signIn(servers, n, at, `mix-${tag}-${loop}-${k}`)
    tally[KINDS[at % KINDS.length]!]++
    for (let r = 0; r < REQUESTS_PER_SESSION && Date.now() < until; r++) {
      const a = await browser.get(servers[(at + r) % n]!, '/private')
      if (a.status !== 200) throw new Error(`mix: an authenticated request answered ${a.status}`)
      tally.requests++
      tally.requestMs.push(a.ms)
      if (a.refreshed) tally.refreshes++
    }
    const out = await browser.get(servers[(at + 1) % n]!, '/auth/logout')
    if (out.status !== 200 || browser.signedIn) throw new Error(`mix: logout answered ${out.status}`)
    tally.logouts++
  }
}

/** The mix on `servers` for `seconds`; operations started before the end are finished and counted. */
export async function mixLoad (servers: ServerProcess[], seconds: number, tag: string): Promise<MixTally> {
  const tally: MixTally = { password: 0, oauth2: 0, email: 0, requests: 0, refreshes: 0, logouts: 0, requestMs: [], revocationMs: [] }
  const until = Date.now() + seconds * 1000
  const sampler = async (): Promise<void> => {
    for (let i = 0; Date.now() < until; i++) tally.revocationMs.push(await revocationSample(servers, `mix-revoked-${tag}-${i}`))
  }
  await Promise.all([sampler(), ...Array.from({ length: MIX_USERS }, async (_, loop) => await userLoop(servers, loop, until, tally, tag))])
  return tally
}
