/**
 * Built-in OAuth2 providers of public services (the first nine are in builtins.ts): each is data, the endpoints
 * its documentation names (cited beside it), the minimal scopes for an id, a name and a picture, PKCE where the
 * service documents it, its quirks, and a mapping from its documented user document. The id is always the
 * service's stable account id, never a login name a user can change or another user can later take.
 */
import type { BuiltinSpec, SettingsSpec } from './builtin-spec.js'
import { firstItem, idAt, mapStandardClaims, objectAt, text } from './fields.js'

/** A header value: printable ASCII. */
const PRINTABLE = /^[\x20-\x7e]{1,256}$/

// https://dev.twitch.tv/docs/authentication/getting-tokens-oauth/#authorization-code-grant-flow
// https://dev.twitch.tv/docs/api/reference/#get-users (no scope for the public profile; Client-Id header required)
const twitch: BuiltinSpec = {
  authURL: 'https://id.twitch.tv/oauth2/authorize',
  tokenURL: 'https://id.twitch.tv/oauth2/token',
  infoURL: 'https://api.twitch.tv/helix/users',
  infoHeaders: { 'Client-Id': '{cid}' },
  scopes: [],
  pkce: false,
  mapUser: (d) => {
    const u = firstItem(d, 'data')
    return { id: idAt(u, 'id'), name: text(u.display_name) ?? text(u.login), picture: text(u.profile_image_url) }
  }
}

// https://developer.spotify.com/documentation/web-api/tutorials/code-flow (Basic client auth)
// https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile
const spotify: BuiltinSpec = {
  authURL: 'https://accounts.spotify.com/authorize',
  tokenURL: 'https://accounts.spotify.com/api/token',
  infoURL: 'https://api.spotify.com/v1/me',
  scopes: [], // id, display_name and images need no scope
  tokenAuth: 'basic',
  mapUser: (d) => ({ id: idAt(d, 'id'), name: text(d.display_name), picture: firstPicture(d.images) })
}

// https://github.com/reddit-archive/reddit/wiki/OAuth2 (Basic client auth, `duration`, GET /api/v1/me on oauth.reddit.com)
// https://support.reddithelp.com/hc/en-us/articles/16160319875092-Reddit-Data-API-Wiki: every client sends its own
// User-Agent, `<platform>:<app ID>:<version> (by /u/<username>)`; generic ones are throttled hard.
const reddit: SettingsSpec = {
  settings: { userAgent: { required: false, kind: PRINTABLE, hint: 'the app\'s User-Agent as Reddit asks for it, e.g. web:com.example.app:1.0 (by /u/yourname)' } },
  build: (s) => ({
    authURL: 'https://www.reddit.com/api/v1/authorize',
    tokenURL: 'https://www.reddit.com/api/v1/access_token',
    infoURL: 'https://oauth.reddit.com/api/v1/me',
    scopes: ['identity'],
    authParams: { duration: 'temporary' },
    pkce: false,
    tokenAuth: 'basic',
    // Without the app's own, one in Reddit's format naming the app by its client id.
    userAgent: s.userAgent ?? 'web:{cid}:1.0 (fastify-gatehouse)',
    // `icon_img` is HTML-escaped (`&amp;` between query parameters).
    mapUser: (d) => ({ id: idAt(d, 'id'), name: text(d.name), picture: text(d.icon_img)?.replaceAll('&amp;', '&') })
  })
}

// https://www.dropbox.com/developers/documentation/http/documentation#oauth2-authorize
// https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account: an RPC endpoint
// without arguments, POSTed with the JSON body `null` (what Dropbox's own SDKs send).
const dropbox: BuiltinSpec = {
  authURL: 'https://www.dropbox.com/oauth2/authorize',
  tokenURL: 'https://api.dropboxapi.com/oauth2/token',
  infoURL: 'https://api.dropboxapi.com/2/users/get_current_account',
  infoMethod: 'POST',
  infoBody: 'null',
  scopes: ['account_info.read'],
  mapUser: (d) => {
    const name = d.name === undefined ? {} : objectAt(d, 'name')
    return { id: idAt(d, 'account_id'), name: text(name.display_name), picture: text(d.profile_photo_url) }
  }
}

// https://developers.zoom.us/docs/integrations/oauth/ (Basic client auth); https://developers.zoom.us/docs/integrations/PKCE/
// https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId} (`me`)
const zoom: BuiltinSpec = {
  authURL: 'https://zoom.us/oauth/authorize',
  tokenURL: 'https://zoom.us/oauth/token',
  infoURL: 'https://api.zoom.us/v2/users/me',
  scopes: ['user:read:user'],
  tokenAuth: 'basic',
  mapUser: (d) => ({
    id: idAt(d, 'id'),
    name: text(d.display_name) ?? ([text(d.first_name), text(d.last_name)].filter(Boolean).join(' ') || undefined),
    picture: text(d.pic_url)
  })
}

// https://developers.notion.com/docs/authorization (Basic client auth, JSON body, `owner=user`)
// https://developers.notion.com/reference/create-a-token: the user is the token answer's `owner.user`.
const notion: BuiltinSpec = {
  authURL: 'https://api.notion.com/v1/oauth/authorize',
  tokenURL: 'https://api.notion.com/v1/oauth/token',
  authParams: { owner: 'user' },
  tokenFormat: 'json',
  userFrom: 'token',
  scopes: [],
  pkce: false,
  tokenAuth: 'basic',
  mapUser: (d) => {
    const owner = objectAt(d, 'owner')
    // A workspace-level token names no person: nobody to sign in.
    if (owner.type !== 'user') throw new Error('the token is not owned by a user')
    const user = objectAt(owner, 'user')
    return { id: idAt(user, 'id'), name: text(user.name), picture: text(user.avatar_url) }
  }
}

// https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/ (audience, prompt=consent, JSON token body)
// GET https://api.atlassian.com/me (scope read:me)
const atlassian: BuiltinSpec = {
  authURL: 'https://auth.atlassian.com/authorize',
  tokenURL: 'https://auth.atlassian.com/oauth/token',
  infoURL: 'https://api.atlassian.com/me',
  authParams: { audience: 'api.atlassian.com', prompt: 'consent' },
  tokenFormat: 'json',
  scopes: ['read:me'],
  pkce: false,
  mapUser: (d) => ({ id: idAt(d, 'account_id'), name: text(d.name) ?? text(d.nickname), picture: text(d.picture) })
}

// https://developer.atlassian.com/cloud/bitbucket/oauth-2/ (Basic client auth)
// https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-get (`uuid`, not the changeable `username`)
const bitbucket: BuiltinSpec = {
  authURL: 'https://bitbucket.org/site/oauth2/authorize',
  tokenURL: 'https://bitbucket.org/site/oauth2/access_token',
  infoURL: 'https://api.bitbucket.org/2.0/user',
  scopes: ['account'],
  pkce: false,
  tokenAuth: 'basic',
  mapUser: (d) => {
    const links = d.links === undefined ? {} : objectAt(d, 'links')
    const avatar = links.avatar === undefined ? {} : objectAt(links, 'avatar')
    return { id: idAt(d, 'uuid'), name: text(d.display_name) ?? text(d.username), picture: text(avatar.href) }
  }
}

// https://developers.figma.com/docs/rest-api/oauth-apps/ (token on api.figma.com, Basic client auth); its token answer
// is documented as `{user_id, access_token, expires_in, refresh_token}`, without `token_type`.
// https://developers.figma.com/docs/rest-api/users-endpoints/ (GET /v1/me, scope current_user:read)
const figma: BuiltinSpec = {
  authURL: 'https://www.figma.com/oauth',
  tokenURL: 'https://api.figma.com/v1/oauth/token',
  infoURL: 'https://api.figma.com/v1/me',
  scopes: ['current_user:read'],
  pkce: false, // not in the Figma documentation found
  tokenAuth: 'basic',
  tokenTypeOptional: true,
  mapUser: (d) => ({ id: idAt(d, 'id'), name: text(d.handle), picture: text(d.img_url) })
}

// https://developer.paypal.com/docs/log-in-with-paypal/integrate/ (Basic client auth; `flowEntry=static`)
// https://developer.paypal.com/docs/api/identity/v1/#userinfo_get (`user_id`; no picture). Sandbox hosts:
// https://developer.paypal.com/docs/log-in-with-paypal/integrate/build-button (www.sandbox.paypal.com) and
// https://developer.paypal.com/limited-release/commerce-platform/v2/test-go-live/sandbox (api-m.sandbox.paypal.com).
const paypal: SettingsSpec = {
  settings: { environment: { required: false, kind: /^(?:live|sandbox)$/, hint: '\'live\' (the default) or \'sandbox\'' } },
  build: (s) => {
    const sandbox = s.environment === 'sandbox' ? 'sandbox.' : ''
    return {
      authURL: `https://www.${sandbox}paypal.com/signin/authorize`,
      tokenURL: `https://api-m.${sandbox}paypal.com/v1/oauth2/token`,
      infoURL: `https://api-m.${sandbox}paypal.com/v1/identity/oauth2/userinfo?schema=paypalv1.1`,
      authParams: { flowEntry: 'static' },
      scopes: ['openid', 'profile'],
      pkce: false,
      tokenAuth: 'basic',
      mapUser: (d) => ({ id: idAt(d, 'user_id'), name: text(d.name) })
    }
  }
}

// https://developer.amazon.com/docs/login-with-amazon/authorization-code-grant.html (PKCE)
// https://developer.amazon.com/docs/login-with-amazon/obtain-customer-profile.html (no picture)
const amazon: BuiltinSpec = {
  authURL: 'https://www.amazon.com/ap/oa',
  tokenURL: 'https://api.amazon.com/auth/o2/token',
  infoURL: 'https://api.amazon.com/user/profile',
  scopes: ['profile'],
  mapUser: (d) => ({ id: idAt(d, 'user_id'), name: text(d.name) })
}

// https://developers.kakao.com/docs/latest/en/kakaologin/rest-api#request-code
// https://developers.kakao.com/docs/latest/en/kakaologin/rest-api#req-user-info (`id` is a number)
// PKCE: Kakao's SDK reference documents the token request's `codeVerifier`
// (https://developers.kakao.com/sdk/reference/android-rx/release/kakao-open-android-docs/com.kakao.sdk.auth/-auth-api-client/issue-access-token.html).
const kakao: BuiltinSpec = {
  authURL: 'https://kauth.kakao.com/oauth/authorize',
  tokenURL: 'https://kauth.kakao.com/oauth/token',
  infoURL: 'https://kapi.kakao.com/v2/user/me',
  scopes: ['profile_nickname', 'profile_image'],
  mapUser: (d) => {
    const account = d.kakao_account === undefined ? {} : objectAt(d, 'kakao_account')
    const profile = account.profile === undefined ? {} : objectAt(account, 'profile')
    // The default image is a grey placeholder: the identicon is better.
    const picture = profile.is_default_image === true ? undefined : text(profile.profile_image_url)
    return { id: idAt(d, 'id'), name: text(profile.nickname), picture }
  }
}

// https://developers.naver.com/docs/login/api/api.md; https://developers.naver.com/docs/login/profile/profile.md
const naver: BuiltinSpec = {
  authURL: 'https://nid.naver.com/oauth2.0/authorize',
  tokenURL: 'https://nid.naver.com/oauth2.0/token',
  infoURL: 'https://openapi.naver.com/v1/nid/me',
  scopes: [], // the fields are chosen in the application's console
  pkce: false,
  mapUser: (d) => {
    // `{resultcode: "00", message: "success", response: {...}}`; any other code is a failure.
    if (d.resultcode !== '00') throw new Error('the profile answer is not a success')
    const r = objectAt(d, 'response')
    return { id: idAt(r, 'id'), name: text(r.nickname) ?? text(r.name), picture: text(r.profile_image) }
  }
}

// https://developers.line.biz/en/docs/line-login/integrate-line-login/; PKCE: https://developers.line.biz/en/docs/line-login/integrate-pkce/
// https://developers.line.biz/en/reference/line-login/#get-user-profile. Scope `profile` without `openid`: LINE
// signs web-login ID tokens with the channel secret (HS256), which the ID-token check refuses by design.
const line: BuiltinSpec = {
  authURL: 'https://access.line.me/oauth2/v2.1/authorize',
  tokenURL: 'https://api.line.me/oauth2/v2.1/token',
  infoURL: 'https://api.line.me/v2/profile',
  scopes: ['profile'],
  mapUser: (d) => ({ id: idAt(d, 'userId'), name: text(d.displayName), picture: text(d.pictureUrl) })
}

// https://developers.tiktok.com/doc/login-kit-web (`client_key`, not `client_id`)
// https://developers.tiktok.com/doc/oauth-user-access-token-management; https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info
const tiktok: BuiltinSpec = {
  authURL: 'https://www.tiktok.com/v2/auth/authorize/',
  tokenURL: 'https://open.tiktokapis.com/v2/oauth/token/',
  infoURL: 'https://open.tiktokapis.com/v2/user/info/?fields=open_id,avatar_url,display_name',
  clientIdParam: 'client_key',
  scopes: ['user.info.basic'],
  pkce: false, // PKCE is documented for its desktop and mobile kits only
  mapUser: (d) => {
    // `{data: {user: {...}}, error: {code: "ok", ...}}`: a code other than "ok" is a failure.
    if (d.error !== undefined && objectAt(d, 'error').code !== 'ok') throw new Error('the user info answer carries an error')
    const u = objectAt(objectAt(d, 'data'), 'user')
    return { id: idAt(u, 'open_id'), name: text(u.display_name), picture: text(u.avatar_url) }
  }
}

// https://docs.kick.com/getting-started/generating-tokens-oauth2-flow (PKCE required); https://docs.kick.com/apis/users
const kick: BuiltinSpec = {
  authURL: 'https://id.kick.com/oauth/authorize',
  tokenURL: 'https://id.kick.com/oauth/token',
  infoURL: 'https://api.kick.com/public/v1/users',
  scopes: ['user:read'],
  mapUser: (d) => {
    const u = firstItem(d, 'data')
    return { id: idAt(u, 'user_id'), name: text(u.name), picture: text(u.profile_picture) }
  }
}

// https://linear.app/developers/oauth-2-0-authentication (PKCE); the user is GraphQL's `viewer`:
// https://linear.app/developers/graphql
const linear: BuiltinSpec = {
  authURL: 'https://linear.app/oauth/authorize',
  tokenURL: 'https://api.linear.app/oauth/token',
  infoURL: 'https://api.linear.app/graphql',
  infoMethod: 'POST',
  infoBody: JSON.stringify({ query: '{ viewer { id name displayName avatarUrl } }' }),
  scopes: ['read'],
  mapUser: (d) => {
    const v = objectAt(objectAt(d, 'data'), 'viewer')
    return { id: idAt(v, 'id'), name: text(v.name) ?? text(v.displayName), picture: text(v.avatarUrl) }
  }
}

// https://create.roblox.com/docs/cloud/auth/oauth2-reference (PKCE supported); https://apis.roblox.com/oauth/.well-known/openid-configuration
const roblox: BuiltinSpec = {
  authURL: 'https://apis.roblox.com/oauth/v1/authorize',
  tokenURL: 'https://apis.roblox.com/oauth/v1/token',
  infoURL: 'https://apis.roblox.com/oauth/v1/userinfo',
  scopes: ['openid', 'profile'],
  oidc: { issuer: 'https://apis.roblox.com/oauth/', jwksURL: 'https://apis.roblox.com/oauth/v1/certs' },
  mapUser: mapStandardClaims
}

// https://huggingface.co/docs/hub/oauth; https://huggingface.co/.well-known/openid-configuration
const huggingface: BuiltinSpec = {
  authURL: 'https://huggingface.co/oauth/authorize',
  tokenURL: 'https://huggingface.co/oauth/token',
  infoURL: 'https://huggingface.co/oauth/userinfo',
  scopes: ['openid', 'profile'],
  oidc: { issuer: 'https://huggingface.co', jwksURL: 'https://huggingface.co/oauth/jwks' },
  mapUser: mapStandardClaims
}

// https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
// https://www.linkedin.com/oauth/.well-known/openid-configuration (PKCE only for native apps enabled by LinkedIn)
const linkedin: BuiltinSpec = {
  authURL: 'https://www.linkedin.com/oauth/v2/authorization',
  tokenURL: 'https://www.linkedin.com/oauth/v2/accessToken',
  infoURL: 'https://api.linkedin.com/v2/userinfo',
  scopes: ['openid', 'profile'],
  oidc: { issuer: 'https://www.linkedin.com/oauth', jwksURL: 'https://www.linkedin.com/oauth/openid/jwks' },
  pkce: false,
  mapUser: mapStandardClaims
}

// https://api.slack.com/authentication/sign-in-with-slack; https://slack.com/.well-known/openid-configuration
// PKCE: https://docs.slack.dev/reference/methods/openid.connect.token takes `code_verifier` (required when the
// authorization request carried a `code_challenge`).
const slack: BuiltinSpec = {
  authURL: 'https://slack.com/openid/connect/authorize',
  tokenURL: 'https://slack.com/api/openid.connect.token',
  infoURL: 'https://slack.com/api/openid.connect.userInfo',
  scopes: ['openid', 'profile'],
  oidc: { issuer: 'https://slack.com', jwksURL: 'https://slack.com/openid/connect/keys' },
  mapUser: (d) => {
    // Slack answers failures with 200 and `{ok: false, error}`.
    if (d.ok === false) throw new Error('the user info answer is not ok')
    // A user id is one workspace's: the id is the workspace's and the user's together.
    const team = d['https://slack.com/team_id']
    if (typeof team !== 'string' || team === '') throw new Error('field "https://slack.com/team_id" is not a team id')
    return {
      id: `${team}/${idAt(d, 'sub')}`,
      name: text(d.name) ?? text(d.given_name),
      picture: text(d['https://slack.com/user_image_192']) ?? text(d.picture)
    }
  }
}

// https://vercel.com/docs/sign-in-with-vercel; https://vercel.com/.well-known/openid-configuration (PKCE S256)
const vercel: BuiltinSpec = {
  authURL: 'https://vercel.com/oauth/authorize',
  tokenURL: 'https://api.vercel.com/login/oauth/token',
  infoURL: 'https://api.vercel.com/login/oauth/userinfo',
  scopes: ['openid', 'profile'],
  oidc: { issuer: 'https://vercel.com', jwksURL: 'https://vercel.com/.well-known/jwks' },
  mapUser: mapStandardClaims
}

// VK ID (OAuth 2.1): https://id.vk.com/about/business/go/docs/en/vkid/latest/vk-id/connection/api-description
// PKCE required; the callback's `device_id` and `state` go back to the token call; the user is
// `POST /oauth2/user_info` with `client_id` and `access_token` in the form: `{user: {user_id, first_name, …}}`.
const vk: BuiltinSpec = {
  authURL: 'https://id.vk.com/authorize',
  tokenURL: 'https://id.vk.com/oauth2/auth',
  infoURL: 'https://id.vk.com/oauth2/user_info',
  infoTokenIn: 'form',
  tokenParams: ['device_id', 'state'],
  scopes: ['vkid.personal_info'],
  mapUser: (d) => {
    const u = objectAt(d, 'user')
    const name = [text(u.first_name), text(u.last_name)].filter(Boolean).join(' ')
    return { id: idAt(u, 'user_id'), name: name === '' ? undefined : name, picture: text(u.avatar) }
  }
}

/** The first picture of Spotify's `images: [{url, height, width}]`, if any. */
function firstPicture (images: unknown): string | undefined {
  if (!Array.isArray(images) || images.length === 0) return undefined
  const first: unknown = images[0]
  return first !== null && typeof first === 'object' ? text((first as Record<string, unknown>).url) : undefined
}

/** The public-service built-ins, by their registered names. */
export const SOCIAL_BUILTINS = {
  twitch, spotify, reddit, dropbox, zoom, notion, atlassian, bitbucket, figma, paypal, amazon, kakao, naver, line,
  tiktok, kick, linear, roblox, huggingface, linkedin, slack, vercel, vk
}
