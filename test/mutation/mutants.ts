/**
 * The mutants of `npm run mutation` (run.ts): deliberate bugs in the security code, one at a time. Each names its
 * file, an original text that occurs exactly once in it (one distinctive line or less, so that the list survives
 * edits around it), the text that replaces it, what the bug breaks, and the test files that should notice it (run
 * in this order; the first that fails kills the mutant).
 *
 * A mutant no test kills is a behaviour no test holds: add the test (the preferred way), or, when the mutant cannot
 * change what any client sees (it is equivalent) or the behaviour is deliberately left to something else, say why
 * in `accepted`. An accepted survivor still counts as survived in the score.
 */

/** The areas of issue 43's list, and DPoP (issue 48): every one has mutants. */
export type Area =
  | 'token endpoints' | 'PKCE' | 'client binding' | 'redirect matching' | 'device limits' | 'migration'
  | 'trusted devices' | 'e-mail codes' | 'captcha' | 're-authentication' | 'step-up' | 'TOTP' | 'XSRF/cross-site'
  | 'revocation' | 'JWS' | 'lockout' | 'authorization audit' | 'issue 43 fixes' | 'SAML' | 'DPoP'

export interface Mutant {
  /** Short and unique (`--only` matches it). */
  id: string
  area: Area
  /** The source file, from the project root. */
  file: string
  /** The original text: it must occur exactly once in `file`. */
  from: string
  /** What replaces it. */
  to: string
  /** What the bug breaks, in a few words. */
  breaks: string
  /** The test files that should kill it, run in order. */
  tests: string[]
  /** Why a survivor is equivalent or accepted (it still counts as survived). */
  accepted?: string | undefined
}

const T = {
  clientTokens: 'test/plugins/core/client-tokens.test.ts',
  families: 'test/plugins/core/refresh-families.test.ts',
  native: 'test/plugins/core/native-sign-in.test.ts',
  nativeBinding: 'test/plugins/core/native-sign-in.binding.test.ts',
  device: 'test/plugins/core/device-sign-in.test.ts',
  deviceGrant: 'test/plugins/core/device-sign-in.grant.test.ts',
  tokenThrottle: 'test/plugins/core/token-throttle.test.ts',
  redirect: 'test/plugins/core/redirect.test.ts',
  serverBad: 'test/servers/server.bad-input.test.ts',
  pkce: 'test/lib/pkce.test.ts',
  migration: 'test/plugins/core/migration.go-pkgz.test.ts',
  migrationMaxAge: 'test/plugins/core/migration.go-pkgz-max-age.test.ts',
  trusted: 'test/plugins/core/trusted-devices.test.ts',
  emailCode: 'test/providers/email/code.test.ts',
  emailCodeRace: 'test/providers/email/code.race.test.ts',
  captcha: 'test/plugins/core/captcha.test.ts',
  captchaAnswers: 'test/plugins/core/captcha.answers.test.ts',
  sessionsReauth: 'test/plugins/core/sessions.reauth.test.ts',
  totpReauth: 'test/providers/totp/reauth.test.ts',
  stepUp: 'test/providers/totp/step-up.test.ts',
  recent: 'test/hooks/recent.test.ts',
  totpCodes: 'test/providers/totp/codes.test.ts',
  totpProvider: 'test/providers/totp/provider.test.ts',
  recoveryCodes: 'test/providers/totp/recovery-codes.test.ts',
  xsrf: 'test/plugins/core/xsrf.test.ts',
  crossSite: 'test/lib/cross-site.test.ts',
  hooks: 'test/hooks/hooks.test.ts',
  revocation: 'test/plugins/core/revocation.test.ts',
  sessions: 'test/plugins/core/sessions.test.ts',
  jws: 'test/plugins/core/jws.test.ts',
  jwsWycheproof: 'test/plugins/core/jws.wycheproof.test.ts',
  forged: 'test/plugins/core/claims.forged.test.ts',
  tokens: 'test/plugins/core/tokens.test.ts',
  lockout: 'test/lib/throttle/lockout.test.ts',
  redisLockout: 'test/e2e/redis/lockout.test.ts',
  redisRace: 'test/e2e/redis/refresh-race.test.ts',
  access: 'test/lib/audit/access.test.ts',
  login: 'test/plugins/core/login.test.ts',
  idpMfa: 'test/e2e/oidc-provider/mfa.test.ts',
  samlAcs: 'test/providers/saml/acs.test.ts',
  samlReal: 'test/e2e/saml/sign-in.test.ts',
  dpop: 'test/plugins/core/dpop.test.ts',
  dpopBad: 'test/plugins/core/dpop-bad-input.test.ts',
  dpopProof: 'test/plugins/core/dpop-proof.test.ts',
  dpopRedis: 'test/plugins/core/dpop.redis.test.ts',
  cacheAuth: 'test/plugins/toolkit/cache-control.auth.test.ts',
  headerRefresh: 'test/plugins/core/header-refresh.test.ts',
  authorizeStart: 'test/plugins/core/authorize-start.test.ts',
  unframeable: 'test/plugins/core/unframeable-pages.test.ts',
  logoutAll: 'test/plugins/core/logout-all.test.ts',
  revokeClient: 'test/plugins/core/revoke-client.test.ts',
  deviceGuessing: 'test/plugins/core/device-guessing.test.ts',
  cleanPath: 'test/plugins/toolkit/clean-path.test.ts',
  redisMigration: 'test/e2e/redis/migration.test.ts',
  pageAnswer: 'test/plugins/core/page-answer.test.ts',
  challenge: 'test/hooks/challenge.test.ts'
} as const

export const MUTANTS: readonly Mutant[] = [
  // Token endpoints: the endpoint's own checks and the refresh families behind the refresh grant.
  { id: 'te-grant-kinds', area: 'token endpoints', file: 'plugins/core/clients/token-endpoint.ts', from: 'if (!grant.kinds.has(client.kind)) throw', to: 'if (false) throw', breaks: 'a client uses a grant of another kind of client', tests: [T.native, T.device] },
  { id: 'te-client-secret', area: 'token endpoints', file: 'plugins/core/clients/token-endpoint.ts', from: "if (request.headers.authorization !== undefined || field('client_secret', true) !== undefined) {", to: 'if (false) {', breaks: 'a client secret or Basic credentials are taken silently', tests: [T.clientTokens] },
  { id: 'te-form-only', area: 'token endpoints', file: 'plugins/core/clients/token-endpoint.ts', from: "if (typeof type !== 'string' || type.split(';')[0]!.trim().toLowerCase() !== FORM) throw", to: "if (typeof type !== 'string') throw", breaks: 'a JSON body is read as a token request', tests: [T.clientTokens] },
  { id: 'te-repeated-field', area: 'token endpoints', file: 'plugins/core/clients/token-endpoint.ts', from: "if (typeof value !== 'string') throw invalidRequest(`${name} is repeated`)", to: "if (typeof value !== 'string' && false) throw invalidRequest(`${name} is repeated`)", breaks: 'a repeated form field is taken', tests: [T.clientTokens] },
  { id: 'te-lockout', area: 'token endpoints', file: 'plugins/core/clients/token-endpoint.ts', from: "const REFUSALS = new Set(['invalid_request', 'invalid_client', 'invalid_grant',", to: "const REFUSALS = new Set(['invalid_request', 'invalid_client',", breaks: 'guessed refresh tokens and codes no longer count toward the address lockout', tests: [T.tokenThrottle] },
  { id: 'rf-take-once', area: 'token endpoints', file: 'plugins/core/clients/refresh-families.ts', from: 'if (!rotated) return await this.reused(', to: 'if (!rotated && false) return await this.reused(', breaks: 'two refreshes racing with one token both get a pair', tests: [T.families, T.redisRace] },
  { id: 'rf-revoked-session', area: 'token endpoints', file: 'plugins/core/clients/refresh-families.ts', from: 'if (await this.d.revocations.isRevoked(subject, record.f === at.family ? mark : undefined)) throw', to: 'if (false) throw', breaks: 'a family whose session was revoked still refreshes', tests: [T.clientTokens] },
  { id: 'rf-rotated-mark', area: 'token endpoints', file: 'plugins/core/clients/refresh-families.ts', from: 'const marker = { key: at.rotated, value: record.f,', to: 'const marker = { key: `${at.rotated}-elsewhere`, value: record.f,', breaks: 'a rotated token presented again is not seen as a reuse', tests: [T.clientTokens] },
  { id: 'rf-reuse-ends-family', area: 'token endpoints', file: 'plugins/core/clients/refresh-families.ts', from: 'return await this.reused(request, client, family, undefined)', to: "throw invalidGrant('unknown or expired refresh token')", breaks: 'reuse of a rotated token leaves the family alive', tests: [T.clientTokens] },
  { id: 'rf-revoke-rotated', area: 'token endpoints', file: 'plugins/core/clients/refresh-families.ts', from: 'const family = record === undefined ? await this.d.store.get(at.rotated) : record.f', to: 'const family = record === undefined ? undefined : record.f', breaks: 'revoking a rotated refresh token leaves its family alive', tests: [T.families] },
  { id: 'rf-idle-ttl', area: 'token endpoints', file: 'plugins/core/clients/refresh-families.ts', from: 'const ttlMs = Math.min(client.idleTimeoutMs, record.end - now)', to: 'const ttlMs = record.end - now', breaks: 'an idle family lives to its absolute end', tests: [T.clientTokens] },

  // PKCE: the registered clients' /authorize and code grant, the package's own authorization servers, the S256 arithmetic.
  { id: 'pkce-verifier-checked', area: 'PKCE', file: 'plugins/core/clients/native-sign-in.ts', from: '|| !safeEqual(pkceChallenge(verifier), record.ch)) throw', to: ') throw', breaks: 'any well-formed verifier exchanges a code', tests: [T.native] },
  { id: 'pkce-same-text', area: 'PKCE', file: 'lib/compare.ts', from: '  return timingSafeEqual(ab, bb)', to: '  return true', breaks: 'any value of the right length compares equal (a PKCE verifier among them)', tests: [T.native] },
  { id: 'pkce-s256-only', area: 'PKCE', file: 'plugins/core/clients/native-sign-in.ts', from: "else if (param('code_challenge_method') !== 'S256') a.error =", to: 'else if (false) a.error =', breaks: 'plain (or no) challenge method accepted', tests: [T.native] },
  { id: 'pkce-challenge-required', area: 'PKCE', file: 'plugins/core/clients/native-sign-in.ts', from: 'else if (!CHALLENGE.test(challenge)) a.error =', to: 'else if (false) a.error =', breaks: 'an authorization request without a challenge gets a code', tests: [T.native] },
  { id: 'pkce-server-verify', area: 'PKCE', file: 'servers/protocol.ts', from: 'if (!safeEqual(computed, challenge)) throw', to: 'if (false) throw', breaks: 'the local OAuth2 server takes any verifier', tests: [T.serverBad] },
  { id: 'pkce-server-s256', area: 'PKCE', file: 'servers/protocol.ts', from: "if (method !== 'S256') throw new OAuthError(400, 'invalid_request', 'code_challenge_method must be S256')", to: '', breaks: 'the local OAuth2 server takes plain PKCE', tests: [T.serverBad] },
  { id: 'pkce-server-required', area: 'PKCE', file: 'servers/protocol.ts', from: "throw new OAuthError(400, 'invalid_request', method === undefined ? 'code_challenge is required (PKCE with S256)' : 'code_challenge_method given without code_challenge')", to: "if (method !== undefined) throw new OAuthError(400, 'invalid_request', 'code_challenge_method given without code_challenge')\n    return ''", breaks: 'the local OAuth2 server hands out a code without PKCE (ASVS 5.0 10.4.6)', tests: [T.serverBad] },
  { id: 'pkce-s256-digest', area: 'PKCE', file: 'lib/pkce.ts', from: ".digest('base64url')", to: ".digest('base64')", breaks: 'the S256 challenge is not RFC 7636\'s', tests: [T.pkce] },

  // Client binding: a code or device_code is the client's that started it; a code is used once.
  { id: 'bind-code-client', area: 'client binding', file: 'plugins/core/clients/native-sign-in.ts', from: "if (record.c !== client.id) throw invalidGrant('the code was issued to another client')", to: '', breaks: 'another client exchanges a code with the verifier', tests: [T.nativeBinding] },
  { id: 'bind-code-redirect', area: 'client binding', file: 'plugins/core/clients/native-sign-in.ts', from: 'if (record.r !== redirectUri) throw', to: 'if (false) throw', breaks: 'a code is exchanged with another redirect_uri', tests: [T.native] },
  { id: 'bind-code-take', area: 'client binding', file: 'plugins/core/clients/native-sign-in.ts', from: 'if (await d.store.take(CODE + hash) === undefined) throw', to: 'if (await d.store.take(CODE + hash) === undefined && false) throw', breaks: 'two exchanges of one code racing both get a pair', tests: [T.nativeBinding] },
  { id: 'bind-code-replay-ends', area: 'client binding', file: 'plugins/core/clients/native-sign-in.ts', from: 'if (family !== undefined) await d.families.endFamily(request, client, family)', to: '', breaks: 'a replayed code leaves what it bought alive', tests: [T.native] },
  { id: 'bind-device-client', area: 'client binding', file: 'plugins/core/clients/device-sign-in.ts', from: 'if (record === undefined || record.c !== client.id) throw', to: 'if (record === undefined) throw', breaks: 'another device client polls a device_code and gets the pair', tests: [T.deviceGrant] },
  { id: 'bind-device-take', area: 'client binding', file: 'plugins/core/clients/device-sign-in.ts', from: "if (await d.store.take(key) === undefined) throw invalidGrant('unknown device_code')", to: '', breaks: 'two polls racing after the approval both get a pair', tests: [T.deviceGrant] },

  // Redirect matching: registered redirect URIs compared as sent; `from` only to the app's origin or allowed hosts.
  { id: 'redirect-loopback-as-sent', area: 'redirect matching', file: 'plugins/core/base/clients.ts', from: '&& url.href === uri &&', to: '&&', breaks: 'non-canonical loopback spellings (.., 0x7f.0.0.1, a tab) pass', tests: [T.nativeBinding] },
  { id: 'redirect-exact', area: 'redirect matching', file: 'plugins/core/base/clients.ts', from: 'if (client.redirectUris.has(uri)) return true', to: 'if ([...client.redirectUris].some((r) => uri.startsWith(r))) return true', breaks: 'a registered redirect URI plus a path or query passes', tests: [T.native] },
  { id: 'redirect-server-exact', area: 'redirect matching', file: 'servers/protocol.ts', from: 'if (!registered.includes(uri)) return', to: 'if (!registered.some((r) => uri.startsWith(r))) return', breaks: 'the local OAuth2 server redirects to a registered URI plus a path', tests: [T.serverBad] },
  { id: 'redirect-from-allowed-host', area: 'redirect matching', file: 'plugins/core/base/redirect.ts', from: 'if (allowed.has(target.host.toLowerCase()) || allowed.has(target.hostname.toLowerCase())) return', to: 'if (allowed.size > 0) return', breaks: '`from` leads to any host once one is allowed', tests: [T.redirect] },
  { id: 'redirect-from-credentials', area: 'redirect matching', file: 'plugins/core/base/redirect.ts', from: "if (target.username !== '' || target.password !== '') return", to: 'if (false) return', breaks: '`from` with user credentials is followed', tests: [T.redirect] },

  // Device limits: wrong user codes counted and capped; the grant's states.
  { id: 'device-guess-cap', area: 'device limits', file: 'plugins/core/clients/device-sign-in.ts', from: 'const GUESSES_PER_ADDRESS = 10', to: 'const GUESSES_PER_ADDRESS = 100', breaks: 'an address guesses user codes ten times longer', tests: [T.device] },
  { id: 'device-guess-page-counted', area: 'device limits', file: 'plugins/core/clients/device-sign-in.ts', from: 'if (record === undefined) await guessFailed(d, request, claims)', to: 'if (record === undefined) void 0', breaks: 'wrong codes on the device page are not counted (an oracle)', tests: [T.device] },
  { id: 'device-guess-boundary', area: 'device limits', file: 'plugins/core/clients/device-sign-in.ts', from: 'if (address >= GUESSES_PER_ADDRESS ||', to: 'if (address > GUESSES_PER_ADDRESS ||', breaks: 'one more guess than the limit', tests: [T.device] },
  { id: 'device-expired', area: 'device limits', file: 'plugins/core/clients/device-sign-in.ts', from: "if (record.exp <= now) throw new OAuthError(400, 'expired_token'", to: "if (false) throw new OAuthError(400, 'expired_token'", breaks: 'an expired device code is still polled', tests: [T.device] },
  { id: 'device-denied', area: 'device limits', file: 'plugins/core/clients/device-sign-in.ts', from: "if (record.st === 'denied') throw", to: 'if (false) throw', breaks: 'a denied sign-in is not reported as denied', tests: [T.device] },
  { id: 'device-slow-down', area: 'device limits', file: 'plugins/core/clients/device-sign-in.ts', from: 'iv: record.iv + 5, next: now + (record.iv + 5) * 1000', to: 'iv: record.iv, next: now + record.iv * 1000', breaks: 'slow_down does not lengthen the interval', tests: [T.deviceGrant] },

  // Migration: go-pkgz tokens verified strictly and exchanged once.
  { id: 'go-signature', area: 'migration', file: 'plugins/core/keys/go-pkgz-token.ts', from: "if (!hmacKey('go-pkgz', key).verify(d.input, d.signature)) throw", to: 'if (false) throw', breaks: 'a Go token is not verified', tests: [T.migration] },
  { id: 'go-alg', area: 'migration', file: 'plugins/core/keys/go-pkgz-token.ts', from: "if (d.header.alg !== 'HS256' || d.header.kid !== undefined) throw", to: 'if (d.header.kid !== undefined) throw', breaks: 'a Go token naming another algorithm is taken', tests: [T.migration] },
  { id: 'go-issuer', area: 'migration', file: 'plugins/core/keys/go-pkgz-token.ts', from: "if (p.iss !== issuer) throw unauthorized('wrong issuer')", to: '', breaks: 'a Go token of another issuer is taken', tests: [T.migration] },
  { id: 'go-expiry', area: 'migration', file: 'plugins/core/keys/go-pkgz-token.ts', from: 'if (p.exp <= now && cookieUntil <= now) throw', to: 'if (false) throw', breaks: 'an expired Go token is taken', tests: [T.migration, T.migrationMaxAge] },
  { id: 'go-max-age', area: 'migration', file: 'plugins/core/keys/go-pkgz-token.ts', from: 'setAt + expiredWithinS : 0', to: 'setAt + expiredWithinS * 10 : 0', breaks: 'an expired Go cookie token is taken after maxAge', tests: [T.migrationMaxAge] },
  { id: 'go-handshake', area: 'migration', file: 'plugins/core/keys/go-pkgz-token.ts', from: "if (p.handshake !== undefined) throw unauthorized('a login handshake is not a session')", to: '', breaks: 'a go-pkgz login handshake passes as a session', tests: [T.migration] },
  { id: 'go-once', area: 'migration', file: 'plugins/core/sessions/migration.ts', from: "if (!await p.store.setIfAbsent(key, '1', ttlMs)) throw", to: "if (!await p.store.setIfAbsent(key, '1', ttlMs) && false) throw", breaks: 'a Go token opens two sessions', tests: [T.migration] },
  { id: 'go-xsrf', area: 'migration', file: 'plugins/core/sessions/migration.ts', from: 'if (source === FROM_COOKIE) this.checkXsrf(request, go.jti)', to: '', breaks: 'a Go cookie token moves without its XSRF header', tests: [T.migration] },
  { id: 'go-no-query', area: 'migration', file: 'plugins/core/sessions/migration.ts', from: 'if (source !== FROM_COOKIE && source !== FROM_HEADER) throw', to: 'if (false) throw', breaks: 'a Go token in a URL is exchanged', tests: [T.migration] },

  // Trusted devices: a device cookie trusted only for its user, while listed, and only from a browser.
  { id: 'trusted-listed', area: 'trusted devices', file: 'plugins/core/signin/trusted-devices.ts', from: "else if (typeof id === 'string' && (await this.entries(userId)).some((e) => e.id === id && e.exp > Date.now())) return id", to: "else if (typeof id === 'string') return id", breaks: 'a forgotten device still skips the second factor', tests: [T.trusted] },
  { id: 'trusted-user', area: 'trusted devices', file: 'plugins/core/signin/trusted-devices.ts', from: "if (claims.sub !== userId) reason = 'other_user'", to: "if (false) reason = 'other_user'", breaks: 'a device cookie of another user is judged as this user\'s', tests: [T.trusted] },
  { id: 'trusted-browser-only', area: 'trusted devices', file: 'plugins/core/signin/trusted-devices.ts', from: 'if (!this.isBrowser(request)) return false', to: '', breaks: 'a header client uses a device cookie', tests: [T.trusted] },
  { id: 'trusted-revoke-user', area: 'trusted devices', file: 'plugins/core/plugin.ts', from: "await p.core().trustedDevices?.forget(undefined, userId, undefined, 'revokeUser')", to: '', breaks: 'revokeUser leaves the trusted devices', tests: [T.trusted] },

  // E-mail codes: one-time, capped, compared, under the lockout.
  { id: 'code-compared', area: 'e-mail codes', file: 'providers/email/code.ts', from: 'const right = safeEqual(macOf(judged.id, code), judged.mac)', to: 'const right = true', breaks: 'any code signs in', tests: [T.emailCode] },
  { id: 'code-one-time', area: 'e-mail codes', file: 'providers/email/code.ts', from: 'if (taken?.id !== pending.id) throw', to: 'if (false) throw', breaks: 'two right answers racing both sign in', tests: [T.emailCodeRace] },
  { id: 'code-lockout', area: 'e-mail codes', file: 'providers/email/code.ts', from: 'const pending = await this.kit.throttle.guard(request, `verify/${this.name}:${address}`, async () => await this.check(address, code))', to: 'const pending = await this.check(address, code)', breaks: 'new codes buy unlimited guesses (no lockout)', tests: [T.emailCode] },
  { id: 'code-post-only', area: 'e-mail codes', file: 'providers/email/code.ts', from: "if (request.method !== 'POST') throw", to: 'if (false) throw', breaks: 'a code is taken from a link', tests: [T.emailCode] },
  { id: 'code-per-send-tries', area: 'e-mail codes', file: 'providers/email/code.ts', from: 'if (tries.count > this.rules.attempts) {', to: 'if (tries.count > this.rules.attempts + 5) {', breaks: 'a sent code allows more wrong tries than `attempts`', tests: [T.emailCode] },

  // Captcha: answers that say nothing wrong but lack what must be there.
  { id: 'captcha-hostname-required', area: 'captcha', file: 'lib/captcha/siteverify.ts', from: 'if (answer.hostname === undefined || !allowed.includes(answer.hostname.toLowerCase())) return', to: 'if (answer.hostname !== undefined && !allowed.includes(answer.hostname.toLowerCase())) return', breaks: 'an answer without hostname lets the login in', tests: [T.captchaAnswers] },
  { id: 'captcha-action-truthy', area: 'captcha', file: 'lib/captcha/siteverify.ts', from: "(a) => action !== undefined && a.action !== action ? refuse('action')", to: "(a) => action !== undefined && a.action && a.action !== action ? refuse('action')", breaks: 'a Turnstile answer without the configured action lets the login in', tests: [T.captchaAnswers] },
  { id: 'captcha-score-required', area: 'captcha', file: 'lib/captcha/siteverify.ts', from: "if (typeof a.score !== 'number' || a.score < minScore) return", to: 'if ((a.score as number) < minScore) return', breaks: 'a reCAPTCHA answer without a score lets the login in', tests: [T.captchaAnswers] },
  { id: 'captcha-verdict-ok', area: 'captcha', file: 'plugins/core/signin/captcha.ts', from: 'verdict?.ok === true', to: 'verdict?.ok !== false', breaks: 'a verifier answering {} or undefined lets the login in', tests: [T.captchaAnswers] },
  { id: 'captcha-host-match', area: 'captcha', file: 'lib/captcha/siteverify.ts', from: 'const allowed = s.hostnames.length > 0 ? s.hostnames : [check.hostname.toLowerCase()]', to: 'const allowed = s.hostnames.length > 0 ? s.hostnames : [answer.hostname ?? \'\']', breaks: 'a token solved on any host is taken', tests: [T.captcha] },
  { id: 'captcha-failure-counted', area: 'captcha', file: 'lib/throttle/lockout.ts', from: 'if (err instanceof HttpError && FAILURES.has(err.code)) await this.failed(attempt)', to: '', breaks: 'refused captchas and wrong passwords are not counted toward the lockout', tests: [T.captcha, T.lockout] },

  // Re-authentication (ASVS 5.0 7.5.1): a change of factors from a fresh cookie session, or with the factor again.
  { id: 'reauth-cookie-only', area: 're-authentication', file: 'plugins/core/signin/reauth.ts', from: 'if (!session.cookie) {', to: 'if (false) {', breaks: 'a header token changes factors', tests: [T.sessionsReauth, T.totpReauth] },
  { id: 'reauth-auth-time', area: 're-authentication', file: 'plugins/core/signin/reauth.ts', from: 'const signedInAt = (session.claims.auth_time ?? session.claims.iat) * 1000', to: 'const signedInAt = session.claims.iat * 1000', breaks: 'a refreshed old session counts as a fresh sign-in', tests: [T.sessionsReauth, T.totpReauth] },
  { id: 'reauth-holds-factor', area: 're-authentication', file: 'plugins/core/signin/reauth.ts', from: 'if (await core.reauth.reauthenticate(kind, request, subject, fields[kind])) return session', to: 'if (await core.reauth.reauthenticate(kind, request, subject, fields[kind]) || true) return session', breaks: 'a password nobody checked re-authenticates', tests: [T.sessionsReauth, T.totpReauth] },
  { id: 'reauth-own-account', area: 're-authentication', file: 'providers/direct.ts', from: "if (account.id !== user.id) throw new HttpError(403, 'forbidden', 'incorrect password'", to: "if (false) throw new HttpError(403, 'forbidden', 'incorrect password'", breaks: 'another account\'s password re-authenticates', tests: [T.sessionsReauth, T.totpReauth] },

  // Step-up: the factor named, in this session, within `within`.
  { id: 'stepup-factor-named', area: 'step-up', file: 'hooks/step-up.ts', from: 'await lastFactorAt(store, sessionId, factor)', to: 'await lastFactorAt(store, sessionId)', breaks: 'recent({ factor }) is satisfied by any factor', tests: [T.recent] },
  { id: 'stepup-within', area: 'step-up', file: 'hooks/step-up.ts', from: 'if (at !== undefined && Date.now() - at <= withinMs) return undefined', to: 'if (at !== undefined) return undefined', breaks: 'a confirmation never grows old', tests: [T.recent, T.stepUp] },
  { id: 'stepup-per-session', area: 'step-up', file: 'lib/login/step-up.ts', from: '`stepup:${factor}:${sessionId}`', to: '`stepup:${factor}:${sessionId.slice(0, 0)}`', breaks: 'a confirmation in one session opens every session', tests: [T.stepUp] },
  { id: 'stepup-sign-in-records', area: 'step-up', file: 'plugins/core/signin/login.ts', from: 'await recordFactor(core.stateStore, claims.jti, result.secondFactor, confirmedAt(result.secondFactorAt))', to: 'await Promise.resolve()', breaks: 'a sign-in with a second factor is no confirmation', tests: [T.stepUp] },
  { id: 'stepup-totp-or-recent', area: 'step-up', file: 'providers/totp/recovery.ts', from: 'if (orRecent && at !== undefined && Date.now() - at <= ctx.o.recentWithinMs) return undefined', to: 'if (orRecent && at !== undefined) return undefined', breaks: 'an old confirmation removes the app or replaces the codes', tests: [T.stepUp, T.totpReauth] },

  { id: 'idp-mfa-amr-named', area: 'step-up', file: 'providers/oauth2/idp-mfa.ts', from: "amr.some((v) => typeof v === 'string' && rule.amr.has(v))", to: 'amr.length > 0', breaks: 'any amr (a password alone) counts as the IdP\'s second factor', tests: [T.idpMfa] },
  { id: 'idp-mfa-max-age', area: 'step-up', file: 'providers/oauth2/idp-mfa.ts', from: 'now - at > rule.maxAgeMs', to: 'now - at > rule.maxAgeMs * 100', breaks: 'an old sign-in at the IdP counts as a recent second factor', tests: [T.idpMfa] },
  { id: 'idp-mfa-auth-time', area: 'step-up', file: 'providers/oauth2/idp-mfa.ts', from: '|| at === undefined ||', to: '||', breaks: 'an ID token without auth_time counts', tests: [T.idpMfa] },
  { id: 'idp-mfa-future', area: 'step-up', file: 'providers/oauth2/idp-mfa.ts', from: '|| at - now > CLOCK_TOLERANCE_MS)', to: ')', breaks: 'an auth_time far ahead counts as now', tests: [T.idpMfa] },
  { id: 'idp-mfa-at-auth-time', area: 'step-up', file: 'providers/oauth2/engine.ts', from: '{ secondFactor: IDP_FACTOR, secondFactorAt: idpFactor }', to: '{ secondFactor: IDP_FACTOR }', breaks: 'the IdP\'s factor counts from the callback, not from when it signed the user in', tests: [T.idpMfa] },

  // TOTP: the window, one use per step, the cap of wrong codes, recovery codes.
  { id: 'totp-no-future-step', area: 'TOTP', file: 'providers/totp/codes.ts', from: 'step <= current; step++', to: 'step <= current + 1; step++', breaks: 'a code of the next step is taken', tests: [T.totpCodes] },
  { id: 'totp-window', area: 'TOTP', file: 'providers/totp/codes.ts', from: 'let step = current - o.window;', to: 'let step = current - o.window - 1;', breaks: 'a code lives a step longer', tests: [T.totpCodes] },
  { id: 'totp-once', area: 'TOTP', file: 'providers/totp/context.ts', from: "if (!(await ctx.state.setIfAbsent(key(step), '1', keepMs))) {", to: 'if (false) {', breaks: 'a code is taken twice', tests: [T.totpCodes] },
  { id: 'totp-no-older', area: 'TOTP', file: 'providers/totp/context.ts', from: "for (let older = step - ctx.o.window; older < step; older++) await ctx.state.setIfAbsent(key(older), '1', keepMs)", to: '', breaks: 'an older code is taken after a newer one', tests: [T.totpCodes] },
  { id: 'totp-wrong-cap', area: 'TOTP', file: 'providers/totp/context.ts', from: 'export const MAX_WRONG_CODES = 100', to: 'export const MAX_WRONG_CODES = 1000', breaks: 'ten times more wrong codes before the account\'s codes stop', tests: [T.totpCodes] },
  { id: 'recovery-120-bits', area: 'TOTP', file: 'providers/totp/codes.ts', from: 'const RECOVERY_LENGTH = 24', to: 'const RECOVERY_LENGTH = 12', breaks: 'recovery codes of 60 bits under a fast hash (ASVS 5.0 6.5.2)', tests: [T.recoveryCodes] },
  { id: 'recovery-alphabet', area: 'TOTP', file: 'providers/totp/codes.ts', from: 'RECOVERY_ALPHABET[b & 31]', to: 'RECOVERY_ALPHABET[b & 15]', breaks: 'each character of a recovery code carries 4 bits, not 5', tests: [T.recoveryCodes] },
  { id: 'recovery-legacy-kept', area: 'TOTP', file: 'providers/totp/codes.ts', from: '&& text.length !== LEGACY_RECOVERY_LENGTH)', to: ')', breaks: 'the codes users wrote down before the 120-bit codes stop working', tests: [T.recoveryCodes] },
  { id: 'totp-recovery-wrong', area: 'TOTP', file: 'providers/totp/context.ts', from: "if (left < 0) throw new HttpError(403, 'forbidden', 'incorrect recovery code'", to: "if (false) throw new HttpError(403, 'forbidden', 'incorrect recovery code'", breaks: 'a wrong recovery code is taken', tests: [T.totpProvider, T.stepUp] },

  // XSRF and cross-site: the double submit bound to the session; Fetch Metadata and Origin.
  { id: 'xsrf-bound-to-session', area: 'XSRF/cross-site', file: 'plugins/core/sessions/xsrf.ts', from: 'if (bothSame(header, text, from, to, jti, jtiCodes)) return', to: 'if (bothSame(header, text, from, to, header)) return', breaks: 'a planted cookie pair passes (header equals cookie, not the session)', tests: [T.xsrf] },
  { id: 'xsrf-navigation-same-site', area: 'XSRF/cross-site', file: 'plugins/core/sessions/xsrf.ts', from: "return site === 'same-origin' || site === 'none'", to: "return site !== 'cross-site'", breaks: 'a sibling subdomain\'s navigation passes without the header', tests: [T.xsrf] },
  { id: 'xsrf-hook-compare', area: 'XSRF/cross-site', file: 'hooks/xsrf.ts', from: '|| !safeEqual(header, cookie)) {', to: ') {', breaks: 'the xsrf hook takes any header', tests: [T.hooks] },
  { id: 'cross-site-same-site', area: 'XSRF/cross-site', file: 'lib/login/cross-site.ts', from: 'return !allowSameSite', to: 'return false', breaks: 'a sibling subdomain signs users in or out', tests: [T.crossSite] },
  { id: 'cross-site-origin-only', area: 'XSRF/cross-site', file: 'lib/login/cross-site.ts', from: 'return origin !== undefined', to: 'return false', breaks: 'without Fetch Metadata an untrusted Origin passes', tests: [T.crossSite] },
  { id: 'cross-site-trusted-hosts', area: 'XSRF/cross-site', file: 'lib/login/cross-site.ts', from: 'return hosts.has(u.host) || hosts.has(u.hostname)', to: "return u.protocol === 'https:'", breaks: 'any https origin is trusted', tests: [T.crossSite] },
  { id: 'own-page-form', area: 'XSRF/cross-site', file: 'plugins/core/clients/client-pages.ts', from: "if ((site !== undefined && site !== 'same-origin') || (from !== undefined && from !== origin)) {", to: "if (site === 'cross-site') {", breaks: 'a sibling subdomain approves a device or a sign-in', tests: [T.deviceGrant] },

  // Revocation: ended sessions stay ended.
  { id: 'revoked-session', area: 'revocation', file: 'plugins/core/sessions/revocation.ts', from: 'if (session !== undefined) return true', to: '', breaks: 'a revoked session is looked up as live', tests: [T.revocation] },
  { id: 'revoked-user-mark', area: 'revocation', file: 'plugins/core/sessions/revocation.ts', from: 'return s.authTime <= mark.nbf && s.jti !== mark.keep', to: 'return s.authTime <= mark.nbf', breaks: '"end my other sessions" ends this one too', tests: [T.sessions, T.revocation] },
  { id: 'revoked-user-before', area: 'revocation', file: 'plugins/core/sessions/revocation.ts', from: 'return s.authTime <= mark.nbf && s.jti !== mark.keep', to: 'return s.authTime < mark.nbf - 3600 && s.jti !== mark.keep', breaks: 'revokeUser spares the sessions of the last hour', tests: [T.revocation, T.sessions] },
  { id: 'prior-session-ended', area: 'revocation', file: 'plugins/core/signin/login.ts', from: '  await endPriorSession(core, request)\n', to: '', breaks: 'the session a browser held before signing in lives on (ASVS 5.0 7.2.4)', tests: [T.login] },
  { id: 'prior-session-expired', area: 'revocation', file: 'plugins/core/signin/login.ts', from: 'await core.tokens.parse(token, { allowExpired: true })', to: 'await core.tokens.parse(token)', breaks: 'an expired but refreshable prior session is not ended at sign-in', tests: [T.login] },
  { id: 'revoke-access-token', area: 'revocation', file: 'plugins/core/clients/client-tokens.ts', from: 'await revocations.revokeSession(claims.jti)', to: '', breaks: 'an access token presented at /revoke ends nothing', tests: [T.clientTokens] },

  // JWS: signatures, algorithms, the strict compact form, the claims that bind a token to its use.
  { id: 'jws-hmac', area: 'JWS', file: 'plugins/core/base/jws.ts', from: 'return timingSafeEqual(createHmac(\'sha256\', key).update(input).digest(), given)', to: 'return given.length === 32', breaks: 'any 32-byte HMAC passes', tests: [T.jws, T.forged] },
  { id: 'jws-alg-pinned', area: 'JWS', file: 'plugins/core/keys/verify.ts', from: "if (d.header.alg !== key.alg) throw unauthorized('algorithm not allowed')", to: '', breaks: 'a token naming another algorithm is verified with the key\'s', tests: [T.forged] },
  { id: 'jws-low-s', area: 'JWS', file: 'plugins/core/base/jws.ts', from: "if (alg === 'ES256' && readS(sig) > P256_HALF_N) return false", to: '', breaks: 'a high-S ES256 signature (a second signature of the same token) passes', tests: [T.jws, T.jwsWycheproof] },
  { id: 'jws-canonical-b64', area: 'JWS', file: 'plugins/core/base/jws.ts', from: 'if ((B64URL[signature.charCodeAt(length - 1)]! & ((1 << spareBits) - 1)) !== 0) return null', to: '', breaks: 'a signature with non-canonical base64url padding bits passes', tests: [T.jws, T.forged] },
  { id: 'jws-crit', area: 'JWS', file: 'plugins/core/base/jws.ts', from: "|| 'crit' in header) return null", to: ') return null', breaks: 'a token with critical extensions we do not understand passes', tests: [T.jws, T.forged, T.tokens] },
  { id: 'claims-purpose', area: 'JWS', file: 'plugins/core/base/claims.ts', from: "if (payload.purpose !== purpose) throw unauthorized('wrong token purpose')", to: '', breaks: 'a token of another purpose passes the claims check', tests: [T.forged, T.tokens] },
  { id: 'claims-issuer', area: 'JWS', file: 'plugins/core/base/claims.ts', from: "if (payload.iss !== issuer) throw unauthorized('wrong issuer')", to: '', breaks: 'a token of another issuer is a session', tests: [T.forged, T.tokens] },
  { id: 'claims-auth-time', area: 'JWS', file: 'plugins/core/base/claims.ts', from: '|| payload.auth_time > now + LEEWAY_S) throw', to: ') throw', breaks: 'a session signed in in the future passes (step-up and reauth clocks)', tests: [T.forged, T.tokens] },

  // Lockout: counted, locked, doubled.
  { id: 'lockout-threshold', area: 'lockout', file: 'lib/throttle/lockout.ts', from: 'if (on && attempt.count > this.o.perAccount) await', to: 'if (on && attempt.count > this.o.perAccount + 1) await', breaks: 'one guess more than the threshold (parallel guesses)', tests: [T.lockout, T.redisLockout] },
  { id: 'lockout-locked', area: 'lockout', file: 'lib/throttle/lockout.ts', from: 'if (until > now) throw new LockedOutError(until - now)', to: '', breaks: 'a locked account is still checked', tests: [T.lockout] },
  { id: 'lockout-per-ip', area: 'lockout', file: 'lib/throttle/lockout.ts', from: 'if (n < this.o.perIp) return', to: 'if (n < this.o.perIp * 2) return', breaks: 'an address trying many accounts gets twice the tries', tests: [T.lockout] },
  { id: 'lockout-doubling', area: 'lockout', file: 'lib/throttle/lockout.ts', from: 'this.o.lockoutMs * 2 ** Math.min(level, 40)', to: 'this.o.lockoutMs', breaks: 'repeated lockouts do not grow', tests: [T.lockout] },

  // Authorization audit (ASVS 5.0 16.3.2): a 403 of admin or rbac is an event.
  { id: 'access-denied-audited', area: 'authorization audit', file: 'hooks/privilege.ts', from: 'if (audit.on) denied(request, audit, privilege, user)', to: '', breaks: 'a 403 of admin or rbac leaves no trace', tests: [T.access] },
  { id: 'access-denied-route-pattern', area: 'authorization audit', file: 'hooks/privilege.ts', from: "route: request.routeOptions.url ?? ''", to: 'route: request.url', breaks: 'the event carries the URL with its values', tests: [T.access] },

  // SAML (issue 47): the checks the provider makes itself around node-saml's signature check.
  { id: 'saml-dtd', area: 'SAML', file: 'providers/saml/xml.ts', from: 'if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw', to: 'if (false) throw', breaks: 'a response with a DTD reaches the parser (entity expansion, external entities)', tests: [T.samlAcs] },
  { id: 'saml-duplicate-assertion', area: 'SAML', file: 'providers/saml/response.ts', from: 'if (all.length > 1) throw', to: 'if (false) throw', breaks: 'a response with a second assertion is taken (the room signature wrapping needs)', tests: [T.samlAcs] },
  { id: 'saml-comment', area: 'SAML', file: 'providers/saml/response.ts', from: 'if (hasCommentOrPi(root)) throw', to: 'if (false) throw', breaks: 'a comment splits a signed NameID (CVE-2017-11428)', tests: [T.samlAcs] },
  { id: 'saml-sha1', area: 'SAML', file: 'providers/saml/xml.ts', from: '  if (allowSha1) return\n', to: '  return\n', breaks: 'SHA-1 signatures and digests are taken without allowSha1', tests: [T.samlAcs] },
  { id: 'saml-destination', area: 'SAML', file: 'providers/saml/response.ts', from: "if (attr(response, 'Destination') !== o.acsUrl) throw", to: 'if (false) throw', breaks: 'a response addressed to another service is taken', tests: [T.samlAcs, T.samlReal] },
  { id: 'saml-issuer', area: 'SAML', file: 'providers/saml/response.ts', from: 'if (issuerOf(assertion) !== idp.entityId) throw', to: 'if (false) throw', breaks: 'an assertion issued by another IdP (signed with a key this IdP shares) is taken', tests: [T.samlAcs] },
  { id: 'saml-assertion-once', area: 'SAML', file: 'providers/saml/response.ts', from: "if (!await kit.stateStore.setIfAbsent(key, '1', ttlMs, { client: kit.throttle.clientKey(request) })) {", to: 'if (false) {', breaks: 'an assertion is used twice (a stolen response replayed with its login state)', tests: [T.samlAcs] },
  { id: 'saml-login-binding', area: 'SAML', file: 'providers/saml/client.ts', from: 'expected !== undefined && key === expected.id ?', to: 'expected !== undefined ?', breaks: 'a response answering another browser\'s login is taken (InResponseTo not bound to the login state)', tests: [T.samlAcs] },
  // DPoP (RFC 9449, issue 48): the proof (dpop-proof.ts), what it must say about its request (dpop.ts), the keys
  // the grants are bound to (refresh-families.ts, native-sign-in.ts).
  { id: 'dpop-bound-as-bearer', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'return source === FROM_DPOP || claims.cnf !== undefined', to: 'return source === FROM_DPOP', breaks: 'a stolen bound token is taken as Bearer, without a proof', tests: [T.dpopBad, T.dpop] },
  { id: 'dpop-proof-key', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'if (jkt !== undefined && proof.jkt !== jkt) throw', to: 'if (false) throw', breaks: 'a proof of any key serves a bound token', tests: [T.dpopBad, T.dpop] },
  { id: 'dpop-htm', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'if (proof.htm !== request.method) throw', to: 'if (false) throw', breaks: 'a proof for another method is taken', tests: [T.dpopBad] },
  { id: 'dpop-htu', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'if (!this.sameUrl(proof.htu, request)) throw', to: 'if (false) throw', breaks: 'a proof for another URL is taken', tests: [T.dpopBad] },
  { id: 'dpop-htu-origin', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: "given.password === '' && given.origin === expected.origin &&", to: "given.password === '' &&", breaks: 'a proof for the same path on another site is taken', tests: [T.dpopBad] },
  { id: 'dpop-ath', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'if (ath !== undefined && proof.ath !== ath) throw', to: 'if (false) throw', breaks: 'a proof made for another access token (or none) is taken', tests: [T.dpopBad] },
  { id: 'dpop-jti-replay', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: "if (!fresh) throw this.refusal(where, 'invalid_dpop_proof'", to: "if (false) throw this.refusal(where, 'invalid_dpop_proof'", breaks: 'a captured proof is replayed', tests: [T.dpopBad, T.dpopRedis] },
  { id: 'dpop-jti-per-session', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: "const client = where === 'token' ? this.d.clientKey(request) : `dpop:${session!}`", to: 'const client = this.d.clientKey(request)', breaks: 'one session\'s proofs fill the state store for every session of its address', tests: [T.dpopBad] },
  { id: 'dpop-iat-old', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'if (proof.iat < now - this.o.proofMaxAgeS - LEEWAY_S) throw', to: 'if (false) throw', breaks: 'an old proof (its jti forgotten) is taken', tests: [T.dpopBad] },
  { id: 'dpop-iat-future', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'if (proof.iat > now + LEEWAY_S) throw', to: 'if (false) throw', breaks: 'a proof made ahead of time is taken', tests: [T.dpopBad] },
  { id: 'dpop-nonce', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: 'if (nonce && !await this.nonces.valid(proof.nonce)) {', to: 'if (false) {', breaks: 'a proof without the server nonce is taken where one is asked for', tests: [T.dpop, T.dpopBad] },
  { id: 'dpop-required-client', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: "if (client.dpop === 'required') throw", to: 'if (false) throw', breaks: "a dpop: 'required' client gets unbound tokens", tests: [T.dpop, T.dpopBad] },
  { id: 'dpop-one-header', area: 'DPoP', file: 'plugins/core/sessions/dpop.ts', from: "if (count > 1 || typeof value !== 'string' || value.includes(',')) throw", to: "if (typeof value !== 'string') throw", breaks: 'two DPoP headers are read as one', tests: [T.dpopBad] },
  { id: 'dpop-refresh-key', area: 'DPoP', file: 'plugins/core/clients/refresh-families.ts', from: 'if (record.k !== undefined && record.k !== jkt) return this.wrongKey(', to: 'if (false) return this.wrongKey(', breaks: 'a bound refresh token refreshes with another key or none', tests: [T.dpop, T.dpopBad] },
  { id: 'dpop-family-key-kept', area: 'DPoP', file: 'plugins/core/clients/refresh-families.ts', from: 'in: inputOf(claims), k: jkt }', to: 'in: inputOf(claims), k: undefined }', breaks: 'a family forgets its key: its refresh token is a Bearer one', tests: [T.dpop, T.dpopBad] },
  { id: 'dpop-code-key', area: 'DPoP', file: 'plugins/core/clients/native-sign-in.ts', from: 'if (record.k !== undefined && record.k !== jkt) d.families.wrongKey(', to: 'if (false) d.families.wrongKey(', breaks: 'a code of dpop_jkt is exchanged with another key or none', tests: [T.dpop, T.dpopBad] },
  { id: 'dpop-size', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: 'if (value.length > MAX_PROOF_BYTES) throw', to: 'if (false) throw', breaks: 'a proof of any size is parsed', tests: [T.dpopBad] },
  { id: 'dpop-typ', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: "if (header?.typ !== 'dpop+jwt') throw", to: 'if (header === undefined) throw', breaks: 'a JWT of another type (an ID token, an access token) is taken as a proof', tests: [T.dpopBad, T.dpopProof] },
  { id: 'dpop-alg-allowed', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: "if (typeof alg !== 'string' || !allowed.has(alg)) throw", to: "if (typeof alg !== 'string') throw", breaks: 'a proof of none or HS256 gets past the header (the app\'s list, asked again after the header cache, is dpop-alg-per-app)', tests: [T.dpopBad, T.dpopProof] },
  { id: 'dpop-alg-per-app', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: 'if (!allowed.has(known.alg)) throw', to: 'if (false) throw', breaks: 'a header another app took passes this app\'s algorithm list', tests: [T.dpopBad] },
  { id: 'dpop-symmetric-alg', area: 'DPoP', file: 'plugins/core/base/dpop-options.ts', from: '!DPOP_ALGORITHMS.includes(a))) {', to: "!DPOP_ALGORITHMS.includes(a) && !a.startsWith('HS'))) {", breaks: 'dpop.algorithms takes an HMAC algorithm', tests: [T.dpop] },
  { id: 'dpop-private-jwk', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: 'if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw', to: 'if (false) throw', breaks: 'a proof carrying its private key is taken', tests: [T.dpopBad, T.dpopProof] },
  { id: 'dpop-key-type', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: 'if (jwk.kty !== need.kty || (need.crv !== undefined && jwk.crv !== need.crv)) throw', to: 'if (false) throw', breaks: 'a key of another type or curve than the alg names', tests: [T.dpopProof] },
  { id: 'dpop-signature', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: 'if (!known.check(input, Buffer.from(parts[2]!, \'base64url\'))) throw', to: 'if (false) throw', breaks: 'a proof with any signature is taken', tests: [T.dpopBad, T.dpopProof] },
  { id: 'dpop-crit', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: "if ('crit' in header) throw", to: 'if (false) throw', breaks: 'a proof with extensions the server does not understand (b64 false) is taken', tests: [T.dpopProof] },
  { id: 'dpop-rsa-size', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: '?? 0) < MIN_RSA_BITS) throw', to: '?? 0) < 1024) throw', breaks: 'a 1024-bit RSA key signs proofs', tests: [T.dpopProof] },
  { id: 'dpop-pss-salt', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: 'saltLength: constants.RSA_PSS_SALTLEN_DIGEST', to: 'saltLength: constants.RSA_PSS_SALTLEN_AUTO', breaks: 'a PSS signature with a salt of another length than the hash passes', tests: [T.dpopProof] },
  { id: 'dpop-ecdsa-form', area: 'DPoP', file: 'plugins/core/base/dpop-proof.ts', from: "{ key, dsaEncoding: 'ieee-p1363' as const }", to: '{ key }', breaks: 'ES proofs are read as DER: every JOSE signature fails, a DER one passes', tests: [T.dpopProof] },

  // Issue 43's fixes (items 1-12; item 13, the soak, has no check to break): each fix undone once.
  { id: 'i43-cache-private', area: 'issue 43 fixes', file: 'plugins/toolkit/cache-control.ts', from: "identity === '' ? shared : personal", to: 'shared', breaks: 'an answer to a signed-in user or to credentials may be kept by a shared cache (no `private`)', tests: [T.cacheAuth] },
  { id: 'i43-cache-etag-user', area: 'issue 43 fixes', file: 'plugins/toolkit/cache-control.ts', from: "if (identity !== '') hash.update(", to: 'if (false) hash.update(', breaks: 'the ETag is the same for every user: Bob (or nobody) revalidates Alice\'s answer into a 304', tests: [T.cacheAuth] },
  { id: 'i43-header-refresh-client', area: 'issue 43 fixes', file: 'plugins/core/sessions/lifetime.ts', from: 'if (claims.client_id !== undefined) throw unauthorized(', to: 'if (false) throw unauthorized(', breaks: 'a registered client\'s expired access token is renewed by header refresh, past its family\'s rules', tests: [T.headerRefresh] },
  { id: 'i43-header-refresh-spent', area: 'issue 43 fixes', file: 'plugins/core/keys/issue.ts', from: 'if (!await spend()) throw', to: 'if (!await spend() && false) throw', breaks: 'an expired header token is refreshed again and again (no rotation)', tests: [T.headerRefresh] },
  { id: 'i43-authorize-start-kept', area: 'issue 43 fixes', file: 'plugins/core/clients/native-sign-in.ts', from: 'if (openedHere(d, request)) await rememberStart(d, reply, a)', to: 'await rememberStart(d, reply, a)', breaks: 'a cross-site /authorize start gets its code without confirmation once the victim has signed in', tests: [T.authorizeStart] },
  { id: 'i43-page-frame-deny', area: 'issue 43 fixes', file: 'lib/html.ts', from: "  'x-frame-options': 'DENY',\n", to: '', breaks: 'a page of the package outside the auth routes (the profiler\'s) can be framed by old browsers', tests: [T.unframeable] },
  { id: 'i43-logout-all-rule', area: 'issue 43 fixes', file: 'plugins/core/plugin.ts', from: 'if (everywhere) await sessionEndingOthers(core, request, reply)', to: '', breaks: 'a client\'s bearer token (or a stale session) ends every session with logout?all=1', tests: [T.logoutAll] },
  { id: 'i43-revoke-other-client', area: 'issue 43 fixes', file: 'plugins/core/clients/client-tokens.ts', from: 'if (claims.client_id !== client.id) return false', to: '', breaks: '/revoke ends another client\'s (or a cookie session\'s) access token', tests: [T.revokeClient] },
  { id: 'i43-device-guess-account', area: 'issue 43 fixes', file: 'plugins/core/clients/device-sign-in.ts', from: 'account >= GUESSES_PER_ACCOUNT || ', to: '', breaks: 'one account on many addresses guesses user codes without a cap of its own', tests: [T.deviceGuessing] },
  { id: 'i43-email-one-refusal', area: 'issue 43 fixes', file: 'providers/email/code.ts', from: 'if (pending === undefined) throw refused()', to: "if (pending === undefined) throw new HttpError(403, 'forbidden', 'no code is pending for this address', ErrorCodes.CREDENTIALS)", breaks: 'the refusal tells whether a sign-in is pending for an address', tests: [T.emailCode] },
  { id: 'i43-clean-path-unreserved', area: 'issue 43 fixes', file: 'plugins/toolkit/clean-path.ts', from: "sent.includes('%') ? sent.replace(ESCAPE, decodeUnreserved) : sent", to: 'sent', breaks: 'a request.url guard after cleanPath is bypassed by /%61dmin', tests: [T.cleanPath] },
  { id: 'i43-go-started-at', area: 'issue 43 fixes', file: 'plugins/core/keys/issue.ts', from: 'base?.jti === undefined && base?.auth_time !== undefined ? { started_at: nowMs / 1000 }', to: 'false ? { started_at: nowMs / 1000 }', breaks: 'a moved go-pkgz session (its sign-in older than the store\'s epoch) is refused on a shared Redis', tests: [T.redisMigration] },
  { id: 'i43-page-answer-constant-time', area: 'issue 43 fixes', file: 'plugins/core/clients/client-pages.ts', from: "if (!safeEqual(field('xsrf'), claims.jti)) throw", to: "if (field('xsrf') !== claims.jti) throw", breaks: 'the confirmation forms compare their XSRF value in variable time', tests: [T.pageAnswer] },
  { id: 'i43-challenge-401', area: 'issue 43 fixes', file: 'hooks/authenticate.ts', from: "if (scheme === undefined) return reply.header('www-authenticate', `${basic ? 'Basic' : 'Bearer'} ${realm}`)", to: 'if (scheme === undefined) return reply', breaks: 'a 401 without a bearer token carries no WWW-Authenticate challenge', tests: [T.challenge] }
]
