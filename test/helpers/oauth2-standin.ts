/**
 * A local stand-in for an internet OAuth2/OIDC provider (the only kind of peer that cannot run here): it speaks
 * the documented authorization-code protocol strictly enough to catch client mistakes (client authentication
 * method, exact redirect_uri, one-time codes, PKCE S256, userinfo auth scheme), serves the user document shaped
 * as the provider documents it, and signs ID tokens with a key published on its JWKS. `faults` switches on one
 * misbehaviour at a time for the bad-input tests.
 */
import { createHash, randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { EventEmitter } from 'node:events'
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import formbody from '@fastify/formbody'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose'
import { safeEqual } from '../../lib/compare.js'

export interface StandinProfile {
  clientId: string
  clientSecret: string
  /** How the client must authenticate at the token endpoint. */
  tokenAuth: 'basic' | 'post'
  /** Checks the presented client secret instead of comparing it (Apple's ES256 JWT). */
  verifyClientSecret?: (secret: string) => Promise<void>
  /** Authorization scheme the userinfo endpoint requires. Default `Bearer`. */
  infoAuthScheme?: string
  /** Require PKCE S256 at authorize and check the verifier at the token endpoint. */
  pkce: boolean
  /** Issue a signed ID token carrying the nonce. */
  oidc?: boolean
  /** Claims of the ID token besides iss/aud/exp/iat/nonce (must include `sub`). */
  idClaims?: Record<string, unknown>
  /** `iss` of ID tokens. Default the stand-in's own URL (changeable later through `Standin.issuer`). */
  issuer?: string
  /** The userinfo answer, as documented by the provider. Omit for providers without userinfo (Apple). */
  userinfo?: unknown
  /** Answer the authorization with an auto-submitting POST form (Apple's response_mode=form_post). */
  formPost?: boolean
  /** Extra form field of a form_post answer (Apple's `user` at first sign-up); read per request. */
  formUser?: string
  /** Paths of the endpoints, where a provider documents its own (`/realms/x/protocol/openid-connect/auth`). */
  paths?: Partial<Record<'authorize' | 'token' | 'userinfo' | 'jwks', string>>
  /** Name of the client-id parameter at authorize and token (TikTok's `client_key`). Default `client_id`. */
  clientIdParam?: string
  /** Token request body: `json` requires a JSON object (Notion, Atlassian). Default form fields. */
  tokenFormat?: 'form' | 'json'
  /** `token_type` of a good token answer; `null` leaves it out (Figma documents none). Default `bearer`. */
  tokenType?: string | null
  /** The User-Agent the token and userinfo endpoints require (Reddit asks each app for its own). */
  userAgent?: RegExp
  /** Fields added to a good token answer (Notion's `owner`, Slack's `ok`). */
  tokenExtra?: Record<string, unknown>
  /** Headers the userinfo endpoint requires, with their values (Twitch's `Client-Id`). */
  infoHeaders?: Record<string, string>
  /** Method of the userinfo endpoint (Dropbox, GraphQL: POST). Default GET. */
  infoMethod?: 'GET' | 'POST'
  /** The JSON body a POST userinfo endpoint requires (a GraphQL query). */
  infoBody?: unknown
  /** Fields added to the authorization answer (VK ID's `device_id`). */
  callbackExtra?: Record<string, string>
  /** Token request fields that must carry the authorization answer's values back (VK ID's `device_id`, `state`). */
  tokenEcho?: string[]
  /** The userinfo request carries `client_id` and `access_token` in a POSTed form instead of a header (VK ID). */
  infoTokenIn?: 'form'
}

/**
 * Hostile answers any endpoint can give: `trickle` sends 200 headers and then one byte a second for ever;
 * `huge` streams 400 MiB of JSON-looking bytes as fast as they are read; `gzip-bomb` sends 400 KiB of gzip that
 * inflates to 400 MiB.
 */
export type Hostile = 'trickle' | 'huge' | 'gzip-bomb'

/** Access tokens a provider must never get to put in our headers or logs. */
export const BAD_ACCESS_TOKENS = {
  'crlf-token': 'abc\r\nX-Injected: 1',
  'latin1-token': 'tök€n-ünicode',
  'nul-token': 'abc\u0000def'
} as const

export interface Faults {
  authorize?: 'deny'
  /**
   * `form`: a good answer, form-encoded (what GitHub sends a client that forgot `Accept`); `*-token`: an
   * unusable access token (BAD_ACCESS_TOKENS); `mac-type`/`no-type`: token_type `mac` / none (RFC 6749 §7.1).
   */
  token?: '500' | 'garbage' | 'hang' | 'no-id-token' | 'no-access-token' | 'form' | keyof typeof BAD_ACCESS_TOKENS | 'mac-type' | 'no-type' | 'odd-error' | Hostile
  /** `no-id`: valid JSON without the user id. */
  info?: 'malformed' | '500' | 'other-sub' | 'no-id' | 'huge' | Hostile
  /** `unknown-kid`: signed with the published key but naming a key id the JWKS does not hold. */
  idToken?: 'badsig' | 'wrong-aud' | 'wrong-iss' | 'expired' | 'no-exp' | 'no-nonce' | 'wrong-nonce' | 'unknown-kid'
  jwks?: '500' | Hostile
}

/** 400 gzip members of 1 MiB of zeros each: a valid 410 KiB gzip body that inflates to 400 MiB. */
const GZIP_BOMB = Buffer.concat(Array<Buffer>(400).fill(gzipSync(Buffer.alloc(1 << 20), { level: 9 })))

/** What hostile answers did: bytes written, connections still open; `closed` is emitted when one closes. */
export class HostileLog extends EventEmitter {
  bytes = 0
  open = 0
}

/** Answers with hostile behaviour `kind`, bypassing Fastify's serialisation. */
function hostile (reply: FastifyReply, kind: Hostile, sent: HostileLog): FastifyReply {
  reply.hijack()
  const res = reply.raw
  sent.open++
  res.once('close', () => { sent.open--; sent.emit('closed') })
  if (kind === 'gzip-bomb') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': GZIP_BOMB.length })
    sent.bytes += GZIP_BOMB.length
    res.end(GZIP_BOMB)
    return reply
  }
  res.writeHead(200, { 'content-type': 'application/json' })
  if (kind === 'trickle') {
    res.write('{')
    const timer = setInterval(() => { res.write(' '); sent.bytes++ }, 1000)
    res.once('close', () => clearInterval(timer))
    return reply
  }
  // huge: 400 MiB, written as the client reads (backpressure), never held in memory here.
  const chunk = Buffer.alloc(64 * 1024, 0x20)
  let left = 400 * 1024 * 1024
  const pump = (): void => {
    while (left > 0) {
      left -= chunk.length
      sent.bytes += chunk.length
      if (!res.write(chunk)) { res.once('drain', pump); return }
    }
    res.end()
  }
  res.once('close', () => { left = 0 })
  res.write('{"keys":[')
  pump()
  return reply
}

interface CodeRecord { redirectUri: string; challenge?: string; nonce?: string; used: boolean; answer?: Record<string, string> }

export interface Standin {
  url: string
  /** `iss` of the ID tokens it signs (default its URL). */
  issuer: string
  /** Every authorization request's parameters, in order. */
  authorizeRequests: URLSearchParams[]
  /** Every token request: its form and whether Basic auth was used. */
  tokenRequests: Array<{ form: Record<string, string>; basic: boolean }>
  /** Every userinfo request's Authorization header. */
  infoAuth: string[]
  /** JWKS documents served. */
  jwksRequests: number
  /** What the hostile answers did (bytes written, connections open). */
  hostile: HostileLog
  /** Key id of the published signing key (OIDC stand-ins). */
  kid: string | undefined
  faults: Faults
  close(): Promise<void>
}

export async function startStandin (profile: StandinProfile): Promise<Standin> {
  // Keys only for OIDC stand-ins: RSA generation is the slowest part of starting one.
  const keys = profile.oidc === true ? await signingKeys() : undefined
  const codes = new Map<string, CodeRecord>()
  const tokens = new Map<string, CodeRecord>()
  const app: FastifyInstance = Fastify({ forceCloseConnections: true })
  await app.register(formbody)
  const self: Standin = {
    url: '',
    issuer: '',
    authorizeRequests: [],
    tokenRequests: [],
    infoAuth: [],
    jwksRequests: 0,
    hostile: new HostileLog(),
    kid: keys?.kid,
    faults: {},
    close: async () => { await app.close() }
  }

  const paths = { authorize: '/authorize', token: '/token', userinfo: '/userinfo', jwks: '/jwks', ...profile.paths }
  const clientIdParam = profile.clientIdParam ?? 'client_id'
  app.get(paths.authorize, async (request, reply) => {
    const q = new URLSearchParams(request.query as Record<string, string>)
    self.authorizeRequests.push(q)
    const redirectUri = q.get('redirect_uri')
    if (q.get('response_type') !== 'code' || q.get(clientIdParam) !== profile.clientId || redirectUri === null) {
      return reply.code(400).send({ error: 'invalid_request' })
    }
    const rec: CodeRecord = { redirectUri, used: false }
    if (profile.pkce) {
      if (q.get('code_challenge_method') !== 'S256' || (q.get('code_challenge') ?? '').length < 43) return reply.code(400).send({ error: 'invalid_request', error_description: 'PKCE S256 required' })
      rec.challenge = q.get('code_challenge')!
    }
    if (q.get('nonce') !== null) rec.nonce = q.get('nonce')!
    const answer: Record<string, string> = { state: q.get('state') ?? '' }
    if (self.faults.authorize === 'deny') {
      answer.error = 'access_denied'
    } else {
      const code = randomBytes(16).toString('hex')
      codes.set(code, rec)
      answer.code = code
      Object.assign(answer, profile.callbackExtra)
      rec.answer = { ...answer }
      if (profile.formUser !== undefined) answer.user = profile.formUser
    }
    if (profile.formPost === true) {
      if (q.get('response_mode') !== 'form_post') return reply.code(400).send({ error: 'invalid_request', error_description: 'response_mode=form_post required' })
      const inputs = Object.entries(answer).map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeAttr(v)}">`).join('')
      return reply.type('text/html').send(`<html><body onload="document.forms[0].submit()"><form method="post" action="${escapeAttr(redirectUri)}">${inputs}</form></body></html>`)
    }
    const to = new URL(redirectUri)
    for (const [k, v] of Object.entries(answer)) to.searchParams.set(k, v)
    return reply.redirect(to.href, 302)
  })

  app.post(paths.token, async (request, reply) => {
    const json = (request.headers['content-type'] ?? '').startsWith('application/json')
    if (json !== (profile.tokenFormat === 'json')) return reply.code(400).send({ error: 'invalid_request', error_description: 'wrong body format' })
    const form = { ...(request.body as Record<string, string>) }
    if (profile.userAgent !== undefined && !profile.userAgent.test(request.headers['user-agent'] ?? '')) return reply.code(429).send({ message: 'Too Many Requests' })
    const header = request.headers.authorization ?? ''
    const basic = header.startsWith('Basic ')
    self.tokenRequests.push({ form, basic })
    let cid: string | undefined
    let secret: string | undefined
    if (profile.tokenAuth === 'basic') {
      if (!basic || form.client_secret !== undefined) return reply.code(401).send({ error: 'invalid_client' })
      const [id, sec] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')
      cid = decodeURIComponent(id ?? ''); secret = decodeURIComponent(sec ?? '')
    } else {
      if (basic) return reply.code(401).send({ error: 'invalid_client' })
      cid = form[clientIdParam]; secret = form.client_secret
    }
    if (cid !== profile.clientId || secret === undefined) return reply.code(401).send({ error: 'invalid_client' })
    if (profile.verifyClientSecret !== undefined) {
      try { await profile.verifyClientSecret(secret) } catch { return reply.code(401).send({ error: 'invalid_client' }) }
    } else if (!safeEqual(secret, profile.clientSecret)) {
      return reply.code(401).send({ error: 'invalid_client' })
    }
    const rec = codes.get(form.code ?? '')
    if (form.grant_type !== 'authorization_code' || rec === undefined || rec.used || form.redirect_uri !== rec.redirectUri) {
      return reply.code(400).send({ error: 'invalid_grant' })
    }
    rec.used = true
    for (const field of profile.tokenEcho ?? []) {
      if (form[field] === undefined || form[field] !== rec.answer?.[field]) return reply.code(400).send({ error: 'invalid_request', error_description: `${field} missing or wrong` })
    }
    if (rec.challenge !== undefined) {
      const expected = createHash('sha256').update(form.code_verifier ?? '').digest('base64url')
      if (!safeEqual(expected, rec.challenge)) return reply.code(400).send({ error: 'invalid_grant', error_description: 'PKCE verification failed' })
    }
    const tf = self.faults.token
    switch (tf) {
      case '500': return reply.code(500).type('text/plain').send('internal error')
      case 'garbage': return reply.code(200).type('text/html').send('<html>502 Bad Gateway</html>')
      case 'hang': return await new Promise(() => {})
      case 'no-access-token': return { token_type: 'bearer' }
      case 'crlf-token': case 'latin1-token': case 'nul-token': return { access_token: BAD_ACCESS_TOKENS[tf], token_type: 'bearer', expires_in: 3600 }
      case 'mac-type': return { access_token: randomBytes(20).toString('hex'), token_type: 'mac', mac_key: 'k', mac_algorithm: 'hmac-sha-256' }
      case 'no-type': return { access_token: randomBytes(20).toString('hex'), expires_in: 3600 }
      // Free text where RFC 6749 §5.2 wants a registered code: it must not reach a client.
      case 'odd-error': return reply.code(400).send({ error: 'call ops at relay.internal.corp:8443', error_description: 'see intranet' })
      case 'trickle': case 'huge': case 'gzip-bomb': return hostile(reply, tf, self.hostile)
    }
    const accessToken = randomBytes(20).toString('hex')
    tokens.set(accessToken, rec)
    if (self.faults.token === 'form') return reply.type('application/x-www-form-urlencoded').send(`access_token=${accessToken}&scope=&token_type=bearer`)
    const body: Record<string, unknown> = { access_token: accessToken, token_type: profile.tokenType ?? 'bearer', expires_in: 3600, ...profile.tokenExtra }
    if (profile.tokenType === null) delete body.token_type
    if (profile.oidc === true && self.faults.token !== 'no-id-token') body.id_token = await idToken(rec)
    return body
  })

  async function idToken (rec: CodeRecord): Promise<string> {
    const f = self.faults.idToken
    const claims: Record<string, unknown> = { ...profile.idClaims }
    if (rec.nonce !== undefined && f !== 'no-nonce') claims.nonce = f === 'wrong-nonce' ? 'not-the-nonce' : rec.nonce
    const now = Math.floor(Date.now() / 1000)
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: f === 'unknown-kid' ? 'not-a-published-key' : keys!.kid })
      .setIssuer(f === 'wrong-iss' ? 'https://evil.example' : self.issuer)
      .setAudience(f === 'wrong-aud' ? 'someone-else' : profile.clientId)
      .setIssuedAt(f === 'expired' ? now - 7200 : now)
    if (f !== 'no-exp') jwt.setExpirationTime(f === 'expired' ? now - 3600 : now + 300)
    return await jwt.sign(f === 'badsig' ? keys!.other : keys!.privateKey)
  }

  app.route({ method: ['GET', 'POST'], url: paths.userinfo, handler: async (request, reply) => {
    // GitHub's API, for one, refuses requests without a User-Agent.
    if (!request.headers['user-agent']) return reply.code(403).send({ message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' })
    if (profile.userAgent !== undefined && !profile.userAgent.test(request.headers['user-agent'] ?? '')) return reply.code(429).send({ message: 'Too Many Requests' })
    if (request.method !== (profile.infoMethod ?? 'GET')) return reply.code(405).send({ error: 'method not allowed' })
    for (const [k, v] of Object.entries(profile.infoHeaders ?? {})) {
      if (request.headers[k.toLowerCase()] !== v) return reply.code(400).send({ error: `header ${k} missing or wrong` })
    }
    if (profile.infoTokenIn !== 'form' && JSON.stringify(request.body) !== JSON.stringify(profile.infoBody)) return reply.code(400).send({ error: 'unexpected body' })
    const header = request.headers.authorization ?? ''
    self.infoAuth.push(header)
    const scheme = profile.infoAuthScheme ?? 'Bearer'
    let token = header.startsWith(`${scheme} `) ? header.slice(scheme.length + 1) : ''
    if (profile.infoTokenIn === 'form') {
      const body = (request.body ?? {}) as Record<string, string>
      if (header !== '' || body.client_id !== profile.clientId) return reply.code(400).send({ error: 'invalid_request' })
      token = body.access_token ?? ''
    }
    if (!tokens.has(token)) return reply.code(401).send({ error: 'invalid_token' })
    const inf = self.faults.info
    switch (inf) {
      case 'trickle': case 'huge': case 'gzip-bomb': return hostile(reply, inf, self.hostile)
      case 'malformed': return reply.code(200).type('application/json').send('{"id": 12, "name": ')
      case '500': return reply.code(500).send({ error: 'server_error' })
      case 'other-sub': return { ...(profile.userinfo as object), sub: 'somebody-else' }
      case 'no-id': return { login: 'someone', name: 'No Id' }
      case 'huge': return { id: 1, name: 'x'.repeat(2 << 20) }
    }
    return profile.userinfo
  } })

  app.get(paths.jwks, async (_request, reply) => {
    self.jwksRequests++
    const jf = self.faults.jwks
    if (jf === '500') return reply.code(500).send('no')
    if (jf !== undefined) return hostile(reply, jf, self.hostile)
    return { keys: keys === undefined ? [] : [keys.jwk] }
  })

  await app.listen({ port: 0, host: '127.0.0.1' })
  self.url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  self.issuer = profile.issuer ?? self.url
  return self
}

/** The signing key, its public JWK, and another key with the same `kid` (for bad-signature tokens). */
async function signingKeys (): Promise<{ privateKey: CryptoKey; other: CryptoKey; kid: string; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const other = await generateKeyPair('RS256')
  const kid = randomBytes(6).toString('hex')
  return { privateKey, other: other.privateKey, kid, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }
}

function escapeAttr (s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
