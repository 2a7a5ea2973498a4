/**
 * SAML 2.0 sign-in as a service provider: `app.register(samlProvider, { name, idp, … })` after the auth core, or a
 * `{ kind: 'saml', … }` entry of the root's `providers`. Routes under `{authPrefix}/<name>`:
 *
 * - `GET|POST /login?tenant=&from=&site=&session=`: SP-initiated sign-in (HTTP-Redirect binding to the IdP), behind
 *   the mount's login prelude (cross-site guard, login count, `from`, `site`); sets the signed login state.
 * - `POST /acs`: the assertion consumer service (HTTP-POST binding): the response checked (response.ts) against
 *   the login state's tenant's IdP only, under the lockout by address, then the session (or a second factor).
 * - `GET /metadata`: the SP's metadata (entity id, ACS, single logout, its certificate when configured).
 * - `GET|POST /logout`: ends the session, then single logout at the IdP when it has an endpoint (logout.ts).
 * - `GET|POST /slo`: where the IdP's LogoutResponse comes back.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { bodyFields, queryText, requestFields, type LoginRequest } from '../../lib/login/login-request.js'
import { requestLogger } from '../../lib/logging/logger.js'
import { setProviderProtocol } from '../../lib/audit/audit.js'
import { LockedOutError } from '../../lib/throttle/lockout.js'
import type { SecondFactorAnswer } from '../../lib/login/second-factor.js'
import { loginStep } from '../../lib/telemetry/index.js'
import { builtinKit } from '../../plugins/core/kit.js'
import { loadSamlDriver } from './driver.js'
import { isNavigation, type SamlContext } from './context.js'
import { IdpDirectory, TENANT_RE } from './directory.js'
import { LoginStateCookie } from './login-state.js'
import { resolveOptions, type SamlProviderOptions } from './options.js'
import { checkResponse, decodeResponse } from './response.js'
import { samlClient } from './client.js'
import { samlUser } from './user.js'
import { samlLogout, singleLogoutReturn } from './logout.js'

async function saml (fastify: FastifyInstance, opts: SamlProviderOptions): Promise<void> {
  const kit = builtinKit(fastify, 'saml')
  const o = resolveOptions(opts, `${kit.url}${kit.authPrefix}`)
  const driver = await loadSamlDriver(`saml.${o.name}`)
  const directory = new IdpDirectory(o, driver, (text) => { kit.logger.logf('[WARN] %s', text) })
  await directory.init()
  const ctx: SamlContext = { kit, o, driver, directory, state: new LoginStateCookie(kit, o.name, o.loginTtlMs) }
  kit.mount({ name: o.name, login: async (request, reply, login) => await startLogin(ctx, request, reply, login), logout: samlLogout(ctx) })
  // Every audit event of this provider, the core's included (login.succeeded, a refused /login), says it is SAML.
  setProviderProtocol(kit.audit, o.name, 'saml')
  kit.secondFactors.take(o.name)
  // The ACS reads a base64 form field: a third more than the XML, and the form's own bytes.
  kit.routes(o.name, (scope) => {
    scope.addHook('onError', async (request, reply, err) => {
      auditAcsFailure(ctx, request, reply, err)
      // A body Fastify refused never reached the handler's lockout: counted here (a lock it sets applies next time).
      if (isAcs(request) && !(err instanceof HttpError) && isMalformed(err)) await underAcsLockout(ctx, request, async () => { throw err }).catch(() => {})
    })
    scope.post('/acs', async (request, reply) => await loginStep(o.name, 'callback', reply, async () => await acs(ctx, request, reply)))
    let metadata: string | undefined
    scope.get('/metadata', async (_request, reply) => {
      metadata ??= spMetadata(ctx)
      return await reply.type('application/samlmetadata+xml; charset=utf-8').send(metadata)
    })
    scope.route({ method: ['GET', 'POST'], url: '/slo', handler: async (request, reply) => await singleLogoutReturn(ctx, request, reply) })
  }, { bodyLimit: Math.ceil(o.maxResponseBytes / 3) * 4 + 8192 })
}

/** `/login`: the login state, then the redirect to the tenant's IdP with an AuthnRequest whose ID the state keeps. */
async function startLogin (ctx: SamlContext, request: FastifyRequest, reply: FastifyReply, login: LoginRequest): Promise<FastifyReply> {
  const tenant = await tenantOf(ctx, request)
  const idp = await ctx.directory.get(tenant)
  const rid = LoginStateCookie.requestId()
  await ctx.state.set(reply, { rid, tenant, from: login.from, site: login.aud, sessionOnly: login.sessionOnly ? true : undefined })
  const location = await samlClient(ctx.driver, ctx.o, idp, undefined, rid).getAuthorizeUrlAsync('', request.hostname, {})
  return reply.code(302).header('location', location).send()
}

/**
 * The tenant a request is for: undefined with one IdP; with an `idp` function, what the `tenant` option reads (by
 * default the `tenant` field). 400 when there is none or it is not a tenant name.
 */
async function tenantOf (ctx: SamlContext, request: FastifyRequest): Promise<string | undefined> {
  if (!ctx.directory.perTenant) return undefined
  let tenant: unknown
  if (ctx.o.tenant === undefined) {
    tenant = queryText(requestFields(request), 'tenant', 64, false)
  } else {
    try {
      tenant = await ctx.o.tenant(request)
    } catch (err) {
      throw new HttpError(503, 'unavailable', 'the tenant could not be told', ErrorCodes.UNAVAILABLE, { reason: 'saml_tenant_lookup', cause: err })
    }
  }
  if (tenant === undefined || tenant === null || tenant === '') throw new HttpError(400, 'bad request', 'tenant is required: which company signs in', ErrorCodes.BAD_REQUEST, { reason: 'saml_unknown_tenant' })
  if (typeof tenant !== 'string' || !TENANT_RE.test(tenant)) throw new HttpError(400, 'bad request', 'tenant must be 1-64 letters, digits, ".", "_" or "-"', ErrorCodes.BAD_REQUEST, { reason: 'saml_unknown_tenant' })
  return tenant
}

/** `POST /acs`: the response checked against the login state's IdP, then the session. */
async function acs (ctx: SamlContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { kit, o } = ctx
  const state = await ctx.state.take(request, reply)
  if (state === undefined && !o.allowIdpInitiated) {
    throw new HttpError(400, 'no login in progress', `the login state cookie is missing; start again at ${kit.authPrefix}/${o.name}/login`, ErrorCodes.HANDSHAKE, { reason: 'handshake' })
  }
  const checked = await underAcsLockout(ctx, request, async () => {
    const b64 = decodeResponse(bodyFields(request).SAMLResponse, o.maxResponseBytes)
    const tenant = state === undefined ? await tenantOf(ctx, request) : state.tenant
    const idp = await ctx.directory.get(tenant)
    const expected = state === undefined ? undefined : { id: state.rid, issuedAt: (state.iat ?? Math.floor(Date.now() / 1000)) * 1000 }
    return await checkResponse(kit, ctx.driver, o, request, idp, b64, expected, tenant)
  })
  if (state !== undefined) await ctx.state.spend(request, state)
  const user = await samlUser(o.name, o.mapUser, checked.assertion)
  const result = { user, aud: state?.site, from: state?.from, sessionOnly: state?.sessionOnly === true }
  // A second factor required of this provider (TOTP, passkeys) takes the login over: then no session yet. The ACS
  // is the browser's navigation from the IdP's page, so the browser goes on to the app's sign-in page, which asks
  // for the factor; a request that is not a navigation gets the 401 naming the methods, as after a password.
  const answer = isNavigation(request) ? toSignInPage(kit.loginPage) : undefined
  const outcome = await kit.secondFactors.of(o.name)?.(request, reply, result, answer) ?? 'complete'
  if (outcome === 'complete') return await kit.completeLogin(request, reply, result)
  if (kit.audit.on) kit.audit.emit(request, 'login.second_factor_required', { reason: 'second_factor', provider: o.name, userId: user.id, aud: result.aud })
  return reply
}

/**
 * The second-factor step's answer to a page navigation: a 303 to the sign-in page with
 * `second_factor=<methods>` (`totp`, `passkey`, comma-separated), where the page asks for one of them; the pending
 * login (its cookie set on this answer) keeps `from`, `site` and `session` for the login the factor completes.
 */
function toSignInPage (loginPage: string): SecondFactorAnswer {
  return (reply, steps) => {
    const page = new URL(loginPage)
    page.searchParams.set('second_factor', steps.map((s) => s.method).join(','))
    void reply.redirect(page.href, 303)
  }
}

/** Reasons of a response refused before any check: not base64, not XML, a DTD, too large. */
const MALFORMED = new Set(['saml_malformed', 'saml_dtd', 'saml_too_large'])
/** What the lockout is shown for a malformed response: a refused credential, which it counts (never sent). */
const COUNTED = new HttpError(403, 'SAML response refused', undefined, ErrorCodes.CREDENTIALS)

/**
 * Runs the ACS's checks under the lockout by address (the account is the client itself, so no one locks anyone
 * else out of the ACS): 429 while the address is locked; a refused response counts, and so does a malformed one
 * (a probe of the parser is an attempt like any other), which still answers its own 400/413.
 */
async function underAcsLockout<T> (ctx: SamlContext, request: FastifyRequest, run: () => Promise<T>): Promise<T> {
  let malformed: unknown
  try {
    return await ctx.kit.throttle.guard(request, `saml/${ctx.o.name}:acs ${ctx.kit.throttle.clientKey(request)}`, async () => {
      try {
        return await run()
      } catch (err) {
        if (!isMalformed(err)) throw err
        malformed = err
        throw COUNTED
      }
    })
  } catch (err) {
    throw err === COUNTED ? malformed : err
  }
}

/** A response refused as malformed: by this provider, or by Fastify before the handler (a body too large). */
function isMalformed (err: unknown): boolean {
  if (err instanceof HttpError) return err.reason !== undefined && MALFORMED.has(err.reason)
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('FST_ERR_CTP_')
}

/** `login.failed` for a refused ACS request (a body too large included, which never reaches the handler), and its log line. */
function auditAcsFailure (ctx: SamlContext, request: FastifyRequest, reply: FastifyReply, err: Error & { statusCode?: number | undefined }): void {
  if (!isAcs(request)) return
  const status = err instanceof HttpError ? err.statusCode : err.statusCode ?? reply.statusCode
  if (status < 500) {
    requestLogger(ctx.kit.logger, request).logf('[WARN] saml %s: response refused: %d %s (%s)', ctx.o.name, status, err.message, err instanceof HttpError ? err.details ?? '' : '')
  }
  if (ctx.kit.audit.on) ctx.kit.audit.emit(request, 'login.failed', { reason: failureReason(err, status), status, provider: ctx.o.name })
}

function isAcs (request: FastifyRequest): boolean {
  return (request.routeOptions.url ?? '').endsWith('/acs')
}

function failureReason (err: unknown, status: number): string {
  if (err instanceof LockedOutError) return 'locked'
  if (err instanceof HttpError) {
    if (err.reason !== undefined) return err.reason
    if (err.code === ErrorCodes.STATE_STORE) return 'state_store_unavailable'
  }
  if (status === 413) return 'saml_too_large'
  return status < 500 ? 'bad_request' : 'error'
}

/** The SP's metadata: entity id, ACS (HTTP-POST), single logout, NameID format, the certificate when configured. */
function spMetadata (ctx: SamlContext): string {
  const { o } = ctx
  return ctx.driver.spMetadata({
    issuer: o.entityId,
    callbackUrl: o.acsUrl,
    logoutCallbackUrl: o.sloUrl,
    identifierFormat: o.nameIdFormat ?? null,
    wantAssertionsSigned: true,
    ...(o.privateKey === undefined ? {} : { privateKey: o.privateKey, decryptionPvk: o.privateKey, publicCerts: o.cert, decryptionCert: o.cert, signatureAlgorithm: 'sha256' as const })
  })
}

/** SAML 2.0 sign-in (service provider) as a plugin (`gatehouse-saml`). */
export const samlProvider = fp(saml, { name: 'gatehouse-saml', fastify: '5.x' })
