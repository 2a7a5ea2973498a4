/**
 * Built-in OpenID Connect providers whose addresses are the app's own account there: an identity service
 * (Okta, Auth0, Keycloak, Microsoft Entra, AWS Cognito, Zitadel, Authentik) or a service that may be
 * self-managed or on a company domain (GitLab, Salesforce). Each builds its endpoints from settings
 * (`issuer`, `domain`, `tenant`, `userPool`, `baseURL`); a required one left out fails registration with an
 * OptionsError naming it. All verify the ID token (issuer, audience, nonce, the provider's keys).
 */
import type { BuiltinSpec, SettingRule, SettingsSpec } from './builtin-spec.js'
import { trimSlash } from './builtin-spec.js'
import { idAt, mapStandardClaims, text } from './fields.js'

const OIDC_SCOPES = ['openid', 'profile']

function required (kind: SettingRule['kind'], hint: string): SettingRule {
  return { required: true, kind, hint }
}

/** A standard OIDC provider from its issuer and endpoint paths, each relative to `base`. */
function standard (issuer: string, base: string, paths: { auth: string; token: string; info: string; jwks: string }, extra: Partial<BuiltinSpec> = {}): BuiltinSpec {
  return {
    authURL: base + paths.auth,
    tokenURL: base + paths.token,
    infoURL: base + paths.info,
    scopes: OIDC_SCOPES,
    oidc: { issuer, jwksURL: base + paths.jwks },
    mapUser: mapStandardClaims,
    ...extra
  }
}

// https://docs.gitlab.com/integration/openid_connect_provider/; https://docs.gitlab.com/api/oauth2/ (PKCE)
const gitlab: SettingsSpec = {
  settings: { baseURL: { required: false, kind: 'url', hint: 'a self-managed instance, e.g. https://gitlab.example.com (default https://gitlab.com)' } },
  build: (s) => {
    const base = trimSlash(s.baseURL ?? 'https://gitlab.com')
    return standard(base, base, { auth: '/oauth/authorize', token: '/oauth/token', info: '/oauth/userinfo', jwks: '/oauth/discovery/keys' }, {
      // `sub` is the numeric user id; `nickname` is the username, which can change and be taken by someone else.
      mapUser: (d) => ({ id: idAt(d, 'sub'), name: text(d.name) ?? text(d.nickname), picture: text(d.picture) })
    })
  }
}

// https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_openid.htm (PKCE; My Domain or login.salesforce.com)
const salesforce: SettingsSpec = {
  settings: { domain: { required: false, kind: 'host', hint: 'a My Domain host, e.g. acme.my.salesforce.com (default login.salesforce.com)' } },
  build: (s) => {
    const base = `https://${s.domain ?? 'login.salesforce.com'}`
    return standard(base, base, { auth: '/services/oauth2/authorize', token: '/services/oauth2/token', info: '/services/oauth2/userinfo', jwks: '/id/keys' }, {
      // A user id is unique within its org; the picture link needs the access token (identicon instead).
      mapUser: (d) => ({ id: `${idAt(d, 'organization_id')}/${idAt(d, 'user_id')}`, name: text(d.name) ?? text(d.preferred_username) })
    })
  }
}

// https://developer.okta.com/docs/reference/api/oidc/ : a custom authorization server's issuer ends in
// /oauth2/<id> and its endpoints are below it; the org authorization server's are below /oauth2/v1.
const okta: SettingsSpec = {
  settings: { issuer: required('url', 'the authorization server\'s issuer, e.g. https://acme.okta.com/oauth2/default') },
  build: (s) => {
    const issuer = trimSlash(s.issuer!)
    const base = new URL(issuer).pathname.includes('/oauth2/') ? issuer : `${issuer}/oauth2`
    return standard(issuer, base, { auth: '/v1/authorize', token: '/v1/token', info: '/v1/userinfo', jwks: '/v1/keys' })
  }
}

// https://auth0.com/docs/api/authentication (authorize, oauth/token, userinfo); issuer https://<domain>/
const auth0: SettingsSpec = {
  settings: { domain: required('host', 'the tenant\'s domain, e.g. acme.eu.auth0.com or a custom domain') },
  build: (s) => standard(`https://${s.domain!}/`, `https://${s.domain!}`, { auth: '/authorize', token: '/oauth/token', info: '/userinfo', jwks: '/.well-known/jwks.json' })
}

// https://www.keycloak.org/securing-apps/oidc-layers (endpoints below the realm's issuer)
const keycloak: SettingsSpec = {
  settings: { issuer: required('url', 'the realm\'s URL, e.g. https://sso.example.com/realms/acme') },
  build: (s) => {
    const issuer = trimSlash(s.issuer!)
    return standard(issuer, issuer, {
      auth: '/protocol/openid-connect/auth',
      token: '/protocol/openid-connect/token',
      info: '/protocol/openid-connect/userinfo',
      jwks: '/protocol/openid-connect/certs'
    })
  }
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc (tenant-specific endpoints)
// https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference: `oid` is the user's
// immutable id in the tenant; the name comes from the ID token (Graph's picture needs the access token).
const entra: SettingsSpec = {
  settings: { tenant: required(GUID, 'the directory (tenant) id, a GUID, from the app registration\'s overview') },
  build: (s) => {
    const base = `https://login.microsoftonline.com/${s.tenant!.toLowerCase()}`
    return {
      authURL: `${base}/oauth2/v2.0/authorize`,
      tokenURL: `${base}/oauth2/v2.0/token`,
      scopes: OIDC_SCOPES,
      oidc: { issuer: `${base}/v2.0`, jwksURL: `${base}/discovery/v2.0/keys` },
      mapUser: (d) => ({ id: idAt(d, 'oid'), name: text(d.name) ?? text(d.preferred_username) })
    }
  }
}

// https://docs.aws.amazon.com/cognito/latest/developerguide/federation-endpoints.html (the domain's /oauth2/*,
// Basic client auth, PKCE); the issuer and keys are the user pool's: https://cognito-idp.<region>.amazonaws.com/<pool>
const cognito: SettingsSpec = {
  settings: {
    domain: required('host', 'the user pool\'s domain, e.g. acme.auth.eu-west-1.amazoncognito.com or a custom domain'),
    userPool: required(/^[a-z]{2}(?:-[a-z]+)+-\d_[A-Za-z0-9]+$/, 'the user pool id, <region>_<id>, e.g. eu-west-1_AbCdEfGhI')
  },
  build: (s) => {
    const region = s.userPool!.split('_')[0]!
    const issuer = `https://cognito-idp.${region}.amazonaws.com/${s.userPool!}`
    const base = `https://${s.domain!}`
    return {
      ...standard(issuer, base, { auth: '/oauth2/authorize', token: '/oauth2/token', info: '/oauth2/userInfo', jwks: '' }),
      oidc: { issuer, jwksURL: `${issuer}/.well-known/jwks.json` },
      tokenAuth: 'basic',
      mapUser: (d) => ({ id: idAt(d, 'sub'), name: text(d.name) ?? text(d.preferred_username) ?? text(d.username), picture: text(d.picture) })
    }
  }
}

// https://zitadel.com/docs/apis/openidoauth/endpoints (Basic client auth by default, PKCE)
const zitadel: SettingsSpec = {
  settings: { issuer: required('url', 'the instance\'s domain, e.g. https://acme-abc123.zitadel.cloud') },
  build: (s) => {
    const issuer = trimSlash(s.issuer!)
    return standard(issuer, issuer, { auth: '/oauth/v2/authorize', token: '/oauth/v2/token', info: '/oidc/v1/userinfo', jwks: '/oauth/v2/keys' }, { tokenAuth: 'basic' })
  }
}

// https://docs.goauthentik.io/add-secure-apps/providers/oauth2/ : the endpoints are the instance's, the issuer and
// keys the application's (https://<host>/application/o/<slug>/).
const authentik: SettingsSpec = {
  settings: { issuer: required('url', 'the application\'s issuer, e.g. https://auth.example.com/application/o/my-app/') },
  build: (s) => {
    const origin = new URL(s.issuer!).origin
    return {
      ...standard(s.issuer!, `${origin}/application/o`, { auth: '/authorize/', token: '/token/', info: '/userinfo/', jwks: '' }),
      oidc: { issuer: s.issuer!, jwksURL: `${trimSlash(s.issuer!)}/jwks/` }
    }
  }
}

/** The built-ins configured by the app's own settings, by their registered names. */
export const PRESET_BUILTINS = { gitlab, salesforce, okta, auth0, keycloak, entra, cognito, zitadel, authentik }
