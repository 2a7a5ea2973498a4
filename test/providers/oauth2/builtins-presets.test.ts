/**
 * The settings-built OpenID Connect built-ins (providers/oauth2/builtins-presets.ts). Those taking a URL setting
 * (gitlab's baseURL; okta, keycloak, zitadel and authentik's issuer) are registered with that setting alone,
 * pointing at a stand-in serving the provider's documented paths, so that the endpoints the preset derives
 * are the ones used end to end. Those taking a host (auth0, cognito, salesforce) or a tenant (entra) build
 * https addresses: their login runs with the endpoints overridden to the stand-in, and the derived addresses
 * are checked against the documentation. A required setting left out, or malformed, fails registration with
 * an OptionsError naming it.
 */
import t from 'tap'
import { oauth2Provider } from '../../../providers/index.js'
import { builtinConfig } from '../../../providers/oauth2/builtins.js'
import { bootError } from '../../helpers/oauth2-app.js'
import { loginCase, startCases, type BuiltinCase } from '../../helpers/builtin-login.js'

const TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad'
const POOL = 'eu-west-1_AbCdEfGhI'

/** A standard OIDC stand-in profile: `sub`, name, picture; `extra` claims in both documents. */
function oidcProfile (sub: string, name: string, picture: string | undefined, over: Partial<BuiltinCase['profile']> = {}): BuiltinCase['profile'] {
  return {
    tokenAuth: 'post',
    pkce: true,
    oidc: true,
    idClaims: { sub, name },
    userinfo: { sub, name, preferred_username: `${name.split(' ')[0]!.toLowerCase()}`, ...(picture === undefined ? {} : { picture }) },
    ...over
  }
}

/** Overrides of every endpoint to the stand-in's default paths (for the https-only presets). */
const overridden = (url: string): Record<string, unknown> => ({ authURL: `${url}/authorize`, tokenURL: `${url}/token`, infoURL: `${url}/userinfo`, jwksURL: `${url}/jwks`, issuer: url })

const CASES: BuiltinCase[] = [
  {
    name: 'gitlab',
    // https://docs.gitlab.com/integration/openid_connect_provider/ (userinfo: sub = user id, nickname = username)
    profile: {
      ...oidcProfile('1234567', 'Ada Gitlab', 'https://gitlab.example.com/uploads/-/system/user/avatar/1234567/avatar.png'),
      userinfo: { sub: '1234567', sub_legacy: '2ab4d7e9', name: 'Ada Gitlab', nickname: 'ada', preferred_username: 'ada', picture: 'https://gitlab.example.com/uploads/-/system/user/avatar/1234567/avatar.png', groups: [] },
      paths: { authorize: '/oauth/authorize', token: '/oauth/token', userinfo: '/oauth/userinfo', jwks: '/oauth/discovery/keys' }
    },
    options: (url) => ({ baseURL: url }),
    scope: 'openid profile',
    expect: { rawId: '1234567', name: 'Ada Gitlab', picture: 'https://gitlab.example.com/uploads/-/system/user/avatar/1234567/avatar.png' }
  },
  {
    name: 'okta',
    // https://developer.okta.com/docs/reference/api/oidc/ (custom authorization server `default`)
    profile: { ...oidcProfile('00uid4BxXw6I6TV4m0g3', 'Okta User', undefined), paths: { authorize: '/oauth2/default/v1/authorize', token: '/oauth2/default/v1/token', userinfo: '/oauth2/default/v1/userinfo', jwks: '/oauth2/default/v1/keys' } },
    issuerPath: '/oauth2/default',
    options: (url) => ({ issuer: `${url}/oauth2/default` }),
    scope: 'openid profile',
    expect: { rawId: '00uid4BxXw6I6TV4m0g3', name: 'Okta User', picture: undefined }
  },
  {
    name: 'keycloak',
    // https://www.keycloak.org/securing-apps/oidc-layers (realm endpoints)
    profile: {
      ...oidcProfile('f3b4e2a1-7c6d-4e5f-8a9b-0c1d2e3f4a5b', 'Kim Keycloak', undefined),
      paths: { authorize: '/realms/acme/protocol/openid-connect/auth', token: '/realms/acme/protocol/openid-connect/token', userinfo: '/realms/acme/protocol/openid-connect/userinfo', jwks: '/realms/acme/protocol/openid-connect/certs' }
    },
    issuerPath: '/realms/acme',
    options: (url) => ({ issuer: `${url}/realms/acme` }),
    scope: 'openid profile',
    expect: { rawId: 'f3b4e2a1-7c6d-4e5f-8a9b-0c1d2e3f4a5b', name: 'Kim Keycloak', picture: undefined }
  },
  {
    name: 'zitadel',
    // https://zitadel.com/docs/apis/openidoauth/endpoints (client_secret_basic)
    profile: { ...oidcProfile('259241944654282754', 'Zed Zitadel', 'https://acme.zitadel.cloud/assets/v1/avatar.png', { tokenAuth: 'basic' }), paths: { authorize: '/oauth/v2/authorize', token: '/oauth/v2/token', userinfo: '/oidc/v1/userinfo', jwks: '/oauth/v2/keys' } },
    options: (url) => ({ issuer: url }),
    scope: 'openid profile',
    expect: { rawId: '259241944654282754', name: 'Zed Zitadel', picture: 'https://acme.zitadel.cloud/assets/v1/avatar.png' }
  },
  {
    name: 'authentik',
    // https://docs.goauthentik.io/add-secure-apps/providers/oauth2/ (instance endpoints, per-application issuer and keys)
    profile: {
      ...oidcProfile('5a1f0e8c3f2b4d6e9a7c8b1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f', 'Ann Authentik', undefined),
      paths: { authorize: '/application/o/authorize/', token: '/application/o/token/', userinfo: '/application/o/userinfo/', jwks: '/application/o/my-app/jwks/' }
    },
    issuerPath: '/application/o/my-app/',
    options: (url) => ({ issuer: `${url}/application/o/my-app/` }),
    scope: 'openid profile',
    expect: { rawId: '5a1f0e8c3f2b4d6e9a7c8b1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f', name: 'Ann Authentik', picture: undefined }
  },
  {
    name: 'auth0',
    // https://auth0.com/docs/api/authentication#get-user-info
    profile: oidcProfile('auth0|507f1f77bcf86cd799439020', 'Jane Auth0', 'https://s.gravatar.com/avatar/jane.png'),
    options: (url) => ({ domain: 'acme.eu.auth0.com', ...overridden(url) }),
    scope: 'openid profile',
    expect: { rawId: 'auth0|507f1f77bcf86cd799439020', name: 'Jane Auth0', picture: 'https://s.gravatar.com/avatar/jane.png' }
  },
  {
    name: 'cognito',
    // https://docs.aws.amazon.com/cognito/latest/developerguide/userinfo-endpoint.html (Basic client auth)
    profile: {
      ...oidcProfile('9a6b7c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d', 'Cory Cognito', undefined, { tokenAuth: 'basic' }),
      userinfo: { sub: '9a6b7c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d', username: 'cory', email: 'cory@example.com', email_verified: 'true' }
    },
    options: (url) => ({ domain: 'acme.auth.eu-west-1.amazoncognito.com', userPool: POOL, ...overridden(url) }),
    scope: 'openid profile',
    expect: { rawId: '9a6b7c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d', name: 'cory', picture: undefined }
  },
  {
    name: 'salesforce',
    // https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_userinfo_endpoint.htm (a user id is its org's)
    profile: {
      ...oidcProfile('https://login.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS', 'Sal Force', undefined),
      userinfo: { sub: 'https://login.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS', user_id: '005xx000001SwiUAAS', organization_id: '00Dxx0000001gPLEAY', preferred_username: 'sal@acme.com', name: 'Sal Force', picture: 'https://acme.file.force.com/profilephoto/005/F' }
    },
    options: (url) => ({ domain: 'acme.my.salesforce.com', ...overridden(url) }),
    scope: 'openid profile',
    expect: { rawId: '00Dxx0000001gPLEAY/005xx000001SwiUAAS', name: 'Sal Force', picture: undefined }
  },
  {
    name: 'entra',
    // https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference (`oid`; no userinfo call)
    profile: {
      tokenAuth: 'post', pkce: true, oidc: true,
      idClaims: { sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ', oid: '00000000-0000-0000-66f3-3332eca7ea81', tid: TENANT, name: 'Grace Entra', preferred_username: 'grace@contoso.com', ver: '2.0' }
    },
    options: (url) => ({ tenant: TENANT, authURL: `${url}/authorize`, tokenURL: `${url}/token`, jwksURL: `${url}/jwks`, issuer: url }),
    scope: 'openid profile',
    expect: { rawId: '00000000-0000-0000-66f3-3332eca7ea81', name: 'Grace Entra', picture: undefined }
  }
]

const { app: testApp, running } = await startCases(t, CASES)

for (const c of CASES) {
  t.test(`${c.name}: full login through its documented protocol and payload`, async (t) => {
    await loginCase(t, testApp, running.get(c.name)!, c)
  })
}

t.test('the https presets derive the documented endpoints, issuer and keys from their settings', async (t) => {
  const endpoints = (name: Parameters<typeof builtinConfig>[0], settings: Record<string, unknown>): unknown => {
    const cfg = builtinConfig(name, 'cid', 'secret', settings)
    return { authURL: cfg.authURL, tokenURL: cfg.tokenURL, infoURL: cfg.infoURL, oidc: cfg.oidc, tokenAuth: cfg.tokenAuth }
  }
  t.same(endpoints('auth0', { domain: 'acme.eu.auth0.com' }), {
    authURL: 'https://acme.eu.auth0.com/authorize',
    tokenURL: 'https://acme.eu.auth0.com/oauth/token',
    infoURL: 'https://acme.eu.auth0.com/userinfo',
    oidc: { issuer: 'https://acme.eu.auth0.com/', jwksURL: 'https://acme.eu.auth0.com/.well-known/jwks.json' },
    tokenAuth: 'post'
  })
  t.same(endpoints('cognito', { domain: 'acme.auth.eu-west-1.amazoncognito.com', userPool: POOL }), {
    authURL: 'https://acme.auth.eu-west-1.amazoncognito.com/oauth2/authorize',
    tokenURL: 'https://acme.auth.eu-west-1.amazoncognito.com/oauth2/token',
    infoURL: 'https://acme.auth.eu-west-1.amazoncognito.com/oauth2/userInfo',
    oidc: { issuer: `https://cognito-idp.eu-west-1.amazonaws.com/${POOL}`, jwksURL: `https://cognito-idp.eu-west-1.amazonaws.com/${POOL}/.well-known/jwks.json` },
    tokenAuth: 'basic'
  })
  t.same(endpoints('salesforce', {}), {
    authURL: 'https://login.salesforce.com/services/oauth2/authorize',
    tokenURL: 'https://login.salesforce.com/services/oauth2/token',
    infoURL: 'https://login.salesforce.com/services/oauth2/userinfo',
    oidc: { issuer: 'https://login.salesforce.com', jwksURL: 'https://login.salesforce.com/id/keys' },
    tokenAuth: 'post'
  })
  t.same(endpoints('entra', { tenant: TENANT }), {
    authURL: `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/authorize`,
    tokenURL: `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/token`,
    infoURL: undefined,
    oidc: { issuer: `https://login.microsoftonline.com/${TENANT}/v2.0`, jwksURL: `https://login.microsoftonline.com/${TENANT}/discovery/v2.0/keys` },
    tokenAuth: 'post'
  })
  t.match(endpoints('gitlab', {}), { authURL: 'https://gitlab.com/oauth/authorize', oidc: { issuer: 'https://gitlab.com', jwksURL: 'https://gitlab.com/oauth/discovery/keys' } })
  t.match(endpoints('okta', { issuer: 'https://acme.okta.com' }), { authURL: 'https://acme.okta.com/oauth2/v1/authorize', oidc: { issuer: 'https://acme.okta.com', jwksURL: 'https://acme.okta.com/oauth2/v1/keys' } }, 'org authorization server')
})

t.test('entra: a token of another tenant is refused (its issuer names the tenant)', async (t) => {
  const run = running.get('entra')!
  const c = CASES.find((x) => x.name === 'entra')!
  const original = run.standin.issuer
  run.standin.issuer = 'https://login.microsoftonline.com/00000000-0000-0000-0000-000000000bad/v2.0'
  t.teardown(() => { run.standin.issuer = original })
  const nav = await testApp.browser().navigate(`http://app.test/auth/${c.name}/login`)
  t.equal(nav.res.status, 401)
  t.match(JSON.parse(nav.body), { error: 'id token rejected', details: /issuer/ })
})

t.test('registration: a missing or malformed setting fails with an OptionsError naming it', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['keycloak without its realm URL', { name: 'keycloak' }, 'oauth2.keycloak.issuer'],
    ['okta without its issuer', { name: 'okta' }, 'oauth2.okta.issuer'],
    ['zitadel without its issuer', { name: 'zitadel' }, 'oauth2.zitadel.issuer'],
    ['authentik without its issuer', { name: 'authentik' }, 'oauth2.authentik.issuer'],
    ['auth0 without its domain', { name: 'auth0' }, 'oauth2.auth0.domain'],
    ['auth0 with a URL for a domain', { name: 'auth0', domain: 'https://acme.auth0.com' }, 'oauth2.auth0.domain'],
    ['entra without its tenant', { name: 'entra' }, 'oauth2.entra.tenant'],
    ['entra with "common" (any tenant) for a tenant', { name: 'entra', tenant: 'common' }, 'oauth2.entra.tenant'],
    ['cognito without its user pool', { name: 'cognito', domain: 'acme.auth.eu-west-1.amazoncognito.com' }, 'oauth2.cognito.userPool'],
    ['cognito without its domain', { name: 'cognito', userPool: POOL }, 'oauth2.cognito.domain'],
    ['cognito with a malformed user pool', { name: 'cognito', domain: 'acme.auth.eu-west-1.amazoncognito.com', userPool: 'AbCdEf' }, 'oauth2.cognito.userPool'],
    ['keycloak over plain http to another host', { name: 'keycloak', issuer: 'http://sso.example.com/realms/acme' }, 'oauth2.keycloak.issuer'],
    ['gitlab with a base URL carrying a query', { name: 'gitlab', baseURL: 'https://gitlab.example.com/?x=1' }, 'oauth2.gitlab.baseURL'],
    ['a setting on a provider that takes none', { name: 'twitch', domain: 'twitch.tv' }, 'oauth2.twitch.domain'],
    ['a setting of another preset', { name: 'auth0', domain: 'acme.auth0.com', tenant: TENANT }, 'oauth2.auth0.tenant']
  ]
  for (const [what, opts, option] of cases) {
    const err = await bootError(async (app) => { await app.register(oauth2Provider, { cid: 'a', csecret: 'b', ...opts } as never) })
    t.match(err, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, what)
  }
  // Through the wrapper: the same check, reported when the app starts.
  t.match(await bootError((app) => { app.auth.addProvider('keycloak', 'a', 'b') }), { code: 'GATEHOUSE_OPTION', option: 'oauth2.keycloak.issuer' }, 'wrapper: keycloak without its issuer')
})
