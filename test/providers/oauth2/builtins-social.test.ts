/**
 * The public-service built-ins (providers/oauth2/builtins-social.ts), each through a full login against a local
 * stand-in speaking its documented protocol and payload (cited beside each case): mapping, minimal scopes, PKCE
 * where documented, client authentication, and the quirks (Twitch's Client-Id header, TikTok's client_key,
 * Notion's user in the token answer, Dropbox's and Linear's POST user calls, Reddit's escaped picture link,
 * Slack's workspace-scoped ids). Then the id rule: the user id follows the provider's stable account id, so a
 * renamed account keeps its user and a new account taking a freed name does not get the old one's.
 */
import t from 'tap'
import { builtinProviders, OAUTH2_BUILTIN_NAMES } from '../../../providers/index.js'
import { builtinProviders as rootBuiltinProviders } from '../../../index.js'
import { builtinConfig } from '../../../providers/oauth2/builtins.js'
import { oauth2Provider } from '../../../providers/index.js'
import { preparedOAuth2Provider } from '../../../providers/oauth2/plugins.js'
import { APP_URL, bootError } from '../../helpers/oauth2-app.js'
import { loginCase, startCases, type BuiltinCase } from '../../helpers/builtin-login.js'

const CASES: BuiltinCase[] = [
  {
    name: 'twitch',
    // https://dev.twitch.tv/docs/api/reference/#get-users
    profile: {
      tokenAuth: 'post', pkce: false, infoHeaders: { 'client-id': 'twitch-cid' },
      userinfo: { data: [{ id: '141981764', login: 'twitchdev', display_name: 'TwitchDev', type: '', broadcaster_type: 'partner', profile_image_url: 'https://static-cdn.jtvnw.net/jtv_user_pictures/8a6381c7-profile_image-300x300.png', created_at: '2016-12-14T20:32:28Z' }] }
    },
    scope: null,
    expect: { rawId: '141981764', name: 'TwitchDev', picture: 'https://static-cdn.jtvnw.net/jtv_user_pictures/8a6381c7-profile_image-300x300.png' }
  },
  {
    name: 'spotify',
    // https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile
    profile: {
      tokenAuth: 'basic', pkce: true,
      userinfo: { display_name: 'JM Wizzler', href: 'https://api.spotify.com/v1/users/wizzler', id: 'wizzler', images: [{ height: 300, url: 'https://i.scdn.co/image/ab6775700000ee85', width: 300 }], type: 'user', uri: 'spotify:user:wizzler', followers: { href: null, total: 3829 } }
    },
    scope: null,
    expect: { rawId: 'wizzler', name: 'JM Wizzler', picture: 'https://i.scdn.co/image/ab6775700000ee85' }
  },
  {
    name: 'reddit',
    // https://www.reddit.com/dev/api/#GET_api_v1_me (icon_img HTML-escaped); a User-Agent of Reddit's format
    // (https://support.reddithelp.com/hc/en-us/articles/16160319875092-Reddit-Data-API-Wiki), else throttled
    profile: { tokenAuth: 'basic', pkce: false, userAgent: /^web:reddit-cid:1\.0 \(fastify-gatehouse\)$/, userinfo: { id: '1w72', name: 'spez_fan', icon_img: 'https://styles.redditmedia.com/t5_1/profileIcon_x.png?width=256&amp;height=256&amp;s=abc', created_utc: 1136073600, total_karma: 100 } },
    scope: 'identity',
    authParams: { duration: 'temporary' },
    expect: { rawId: '1w72', name: 'spez_fan', picture: 'https://styles.redditmedia.com/t5_1/profileIcon_x.png?width=256&height=256&s=abc' }
  },
  {
    name: 'dropbox',
    // https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account (POST, JSON `null`)
    profile: {
      tokenAuth: 'post', pkce: true, infoMethod: 'POST', infoBody: null,
      userinfo: { account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc', name: { given_name: 'Franz', surname: 'Ferdinand', familiar_name: 'Franz', display_name: 'Franz Ferdinand (Personal)', abbreviated_name: 'FF' }, email: 'franz@example.com', email_verified: true, profile_photo_url: 'https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAHWGmIX?size=128x128', account_type: { '.tag': 'basic' } }
    },
    scope: 'account_info.read',
    expect: { rawId: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc', name: 'Franz Ferdinand (Personal)', picture: 'https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAHWGmIX?size=128x128' }
  },
  {
    name: 'zoom',
    // https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId}
    profile: { tokenAuth: 'basic', pkce: true, userinfo: { id: 'KDcuGIm1QgePTO8WbOqwIQ', first_name: 'Jill', last_name: 'Chill', display_name: 'Jill Chill', email: 'jchill@example.com', type: 1, pic_url: 'https://example.zoom.us/p/photo.jpg' } },
    scope: 'user:read:user',
    expect: { rawId: 'KDcuGIm1QgePTO8WbOqwIQ', name: 'Jill Chill', picture: 'https://example.zoom.us/p/photo.jpg' }
  },
  {
    name: 'notion',
    // https://developers.notion.com/reference/create-a-token: the person is the token answer's owner.user
    profile: {
      tokenAuth: 'basic', pkce: false, tokenFormat: 'json',
      tokenExtra: {
        bot_id: 'b3414d65-1224-5ty7-6ffr-cc9d8773d601', workspace_id: 'j565j4d7-2882-61bs-564a-jj9d9uic36hx', workspace_name: 'Ada\'s Workspace', workspace_icon: null,
        owner: { type: 'user', user: { object: 'user', id: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6', name: 'Avo Cado', avatar_url: 'https://s3-us-west-2.amazonaws.com/public.notion-static.com/avatar.jpg', type: 'person', person: { email: 'avo@example.org' } } },
        duplicated_template_id: null, request_id: '3c90c3cc-0d44-4b50-8888-8dd25736052a'
      }
    },
    scope: null,
    authParams: { owner: 'user' },
    expect: { rawId: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6', name: 'Avo Cado', picture: 'https://s3-us-west-2.amazonaws.com/public.notion-static.com/avatar.jpg' }
  },
  {
    name: 'atlassian',
    // https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/#how-do-i-retrieve-the-public-profile-of-the-authenticated-user-
    profile: {
      tokenAuth: 'post', pkce: false, tokenFormat: 'json',
      userinfo: { account_type: 'atlassian', account_id: '112233aa-bb11-cc22-33dd-445566abcabc', email: 'mia@example.com', name: 'Mia Krystof', picture: 'https://avatar-management--avatars.us-west-2.prod.public.atl-paas.net/112233aa/1234abcd', account_status: 'active', nickname: 'mkrystof', zoneinfo: 'Australia/Sydney', locale: 'en-US' }
    },
    scope: 'read:me',
    authParams: { audience: 'api.atlassian.com', prompt: 'consent' },
    expect: { rawId: '112233aa-bb11-cc22-33dd-445566abcabc', name: 'Mia Krystof', picture: 'https://avatar-management--avatars.us-west-2.prod.public.atl-paas.net/112233aa/1234abcd' }
  },
  {
    name: 'bitbucket',
    // https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-get
    profile: { tokenAuth: 'basic', pkce: false, userinfo: { uuid: '{d301aafa-d676-4ee0-88be-962be7417567}', username: 'evzijst', display_name: 'Erik van Zijst', account_id: '557058:c0b72ad0', type: 'user', links: { avatar: { href: 'https://bitbucket.org/account/evzijst/avatar/' } } } },
    scope: 'account',
    expect: { rawId: '{d301aafa-d676-4ee0-88be-962be7417567}', name: 'Erik van Zijst', picture: 'https://bitbucket.org/account/evzijst/avatar/' }
  },
  {
    name: 'figma',
    // https://developers.figma.com/docs/rest-api/users-types/ (GET /v1/me); the token answer has no token_type:
    // `{user_id, access_token, expires_in, refresh_token}` (https://developers.figma.com/docs/rest-api/oauth-apps/)
    profile: { tokenAuth: 'basic', pkce: false, tokenType: null, tokenExtra: { user_id: '1234567890123456789', refresh_token: 'figma-refresh' }, userinfo: { id: '1234567890123456789', email: 'rachel@example.com', handle: 'Rachel Design', img_url: 'https://s3-alpha.figma.com/profile/abc' } },
    scope: 'current_user:read',
    expect: { rawId: '1234567890123456789', name: 'Rachel Design', picture: 'https://s3-alpha.figma.com/profile/abc' }
  },
  {
    name: 'paypal',
    // https://developer.paypal.com/docs/api/identity/v1/#userinfo_get
    profile: { tokenAuth: 'basic', pkce: false, userinfo: { user_id: 'https://www.paypal.com/webapps/auth/identity/user/mWq6_1sU85v5EG9yHdPxJRrhGHrnMJ-1PQKtX6pcsmA', name: 'Identity Test', payer_id: 'WDJJHEBZ4X2LY', verified_account: 'true' } },
    scope: 'openid profile',
    authParams: { flowEntry: 'static' },
    expect: { rawId: 'https://www.paypal.com/webapps/auth/identity/user/mWq6_1sU85v5EG9yHdPxJRrhGHrnMJ-1PQKtX6pcsmA', name: 'Identity Test', picture: undefined }
  },
  {
    name: 'amazon',
    // https://developer.amazon.com/docs/login-with-amazon/obtain-customer-profile.html
    profile: { tokenAuth: 'post', pkce: true, userinfo: { user_id: 'amzn1.account.K2LI23KL2LK2', email: 'mork@example.com', name: 'Mork Hashimoto', postal_code: '98052' } },
    scope: 'profile',
    expect: { rawId: 'amzn1.account.K2LI23KL2LK2', name: 'Mork Hashimoto', picture: undefined }
  },
  {
    name: 'kakao',
    // https://developers.kakao.com/docs/latest/en/kakaologin/rest-api#req-user-info-response (PKCE: the SDK's codeVerifier)
    profile: {
      tokenAuth: 'post', pkce: true,
      userinfo: { id: 3102983551, connected_at: '2022-04-11T01:45:28Z', properties: { nickname: 'hong' }, kakao_account: { profile_nickname_needs_agreement: false, profile: { nickname: 'Hong Gildong', thumbnail_image_url: 'http://k.kakaocdn.net/dn/x/img_110x110.jpg', profile_image_url: 'http://k.kakaocdn.net/dn/x/img_640x640.jpg', is_default_image: false } } }
    },
    scope: 'profile_nickname profile_image',
    expect: { rawId: '3102983551', name: 'Hong Gildong', picture: 'http://k.kakaocdn.net/dn/x/img_640x640.jpg' }
  },
  {
    name: 'naver',
    // https://developers.naver.com/docs/login/profile/profile.md
    profile: { tokenAuth: 'post', pkce: false, userinfo: { resultcode: '00', message: 'success', response: { id: 'V7v9Hqf0-5Bc2sZ8Ab3dK9xLmQ', nickname: 'openapi', name: 'Open API', profile_image: 'https://ssl.pstatic.net/static/pwe/address/img_profile.png' } } },
    scope: null,
    expect: { rawId: 'V7v9Hqf0-5Bc2sZ8Ab3dK9xLmQ', name: 'openapi', picture: 'https://ssl.pstatic.net/static/pwe/address/img_profile.png' }
  },
  {
    name: 'line',
    // https://developers.line.biz/en/reference/line-login/#get-profile-response
    profile: { tokenAuth: 'post', pkce: true, userinfo: { userId: 'U4af4980629a1b2c3d4e5f60718293a4b', displayName: 'Brown', pictureUrl: 'https://profile.line-scdn.net/abcdefghijklmn', statusMessage: 'Hello, LINE!' } },
    scope: 'profile',
    expect: { rawId: 'U4af4980629a1b2c3d4e5f60718293a4b', name: 'Brown', picture: 'https://profile.line-scdn.net/abcdefghijklmn' }
  },
  {
    name: 'tiktok',
    // https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info; token: https://developers.tiktok.com/doc/oauth-user-access-token-management
    profile: {
      tokenAuth: 'post', pkce: false, clientIdParam: 'client_key',
      tokenExtra: { open_id: '723f24d7-e717-40f8-a2b6-cb8464cd23b4', scope: 'user.info.basic', refresh_token: 'rft.abc', refresh_expires_in: 31536000 },
      userinfo: { data: { user: { open_id: '723f24d7-e717-40f8-a2b6-cb8464cd23b4', union_id: 'c9c60f44-a68e-4f5d-84dd-ce22faeb0ba1', avatar_url: 'https://p19-sign.tiktokcdn-us.com/tos-useast5-avt-0068-tx/b17f0e4b.jpeg', display_name: 'Tik Toker' } }, error: { code: 'ok', message: '', log_id: '20220829194722CBE87ED59D524E727021' } }
    },
    scope: 'user.info.basic',
    expect: { rawId: '723f24d7-e717-40f8-a2b6-cb8464cd23b4', name: 'Tik Toker', picture: 'https://p19-sign.tiktokcdn-us.com/tos-useast5-avt-0068-tx/b17f0e4b.jpeg' }
  },
  {
    name: 'kick',
    // https://docs.kick.com/apis/users (GET /public/v1/users without ids: the token's user)
    profile: { tokenAuth: 'post', pkce: true, userinfo: { data: [{ email: 'k@example.com', name: 'kickstreamer', profile_picture: 'https://files.kick.com/images/user/4377088/profile_image/fullsize.webp', user_id: 4377088 }], message: 'OK' } },
    scope: 'user:read',
    expect: { rawId: '4377088', name: 'kickstreamer', picture: 'https://files.kick.com/images/user/4377088/profile_image/fullsize.webp' }
  },
  {
    name: 'linear',
    // https://linear.app/developers/graphql (POST the `viewer` query)
    profile: {
      tokenAuth: 'post', pkce: true, infoMethod: 'POST', infoBody: { query: '{ viewer { id name displayName avatarUrl } }' },
      userinfo: { data: { viewer: { id: '8f5e1d2c-3b4a-4c5d-9e8f-7a6b5c4d3e2f', name: 'Jane Linear', displayName: 'jane', avatarUrl: 'https://public.linear.app/avatar/abc.png' } } }
    },
    scope: 'read',
    expect: { rawId: '8f5e1d2c-3b4a-4c5d-9e8f-7a6b5c4d3e2f', name: 'Jane Linear', picture: 'https://public.linear.app/avatar/abc.png' }
  },
  {
    name: 'roblox',
    // https://create.roblox.com/docs/cloud/reference/oauth2#get-v1userinfo
    profile: {
      tokenAuth: 'post', pkce: true, oidc: true,
      idClaims: { sub: '1516563360', name: 'exampleuser', nickname: 'exampleuser', preferred_username: 'exampleuser', created_at: 1584682495 },
      userinfo: { sub: '1516563360', name: 'Example User', nickname: 'exampleuser', preferred_username: 'exampleuser', created_at: 1584682495, profile: 'https://www.roblox.com/users/1516563360/profile', picture: 'https://tr.rbxcdn.com/30DAY-AvatarHeadshot-abc/150/150/AvatarHeadshot/Png/noFilter' }
    },
    scope: 'openid profile',
    expect: { rawId: '1516563360', name: 'Example User', picture: 'https://tr.rbxcdn.com/30DAY-AvatarHeadshot-abc/150/150/AvatarHeadshot/Png/noFilter' }
  },
  {
    name: 'huggingface',
    // https://huggingface.co/docs/hub/oauth (userinfo: sub, name, preferred_username, picture, …)
    profile: {
      tokenAuth: 'post', pkce: true, oidc: true,
      idClaims: { sub: '62f264b9f3c90f4b6514a269', preferred_username: 'hugo' },
      userinfo: { sub: '62f264b9f3c90f4b6514a269', name: 'Hugo Face', preferred_username: 'hugo', profile: 'https://huggingface.co/hugo', picture: 'https://cdn-avatars.huggingface.co/v1/production/uploads/abc.png', isPro: false, orgs: [] }
    },
    scope: 'openid profile',
    expect: { rawId: '62f264b9f3c90f4b6514a269', name: 'Hugo Face', picture: 'https://cdn-avatars.huggingface.co/v1/production/uploads/abc.png' }
  },
  {
    name: 'linkedin',
    // https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2#api-request-to-retreive-member-details
    profile: {
      tokenAuth: 'post', pkce: false, oidc: true,
      idClaims: { sub: '782bbtaQ', name: 'John Doe', given_name: 'John', family_name: 'Doe' },
      userinfo: { sub: '782bbtaQ', name: 'John Doe', given_name: 'John', family_name: 'Doe', picture: 'https://media.licdn.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/', locale: 'en-US' }
    },
    scope: 'openid profile',
    expect: { rawId: '782bbtaQ', name: 'John Doe', picture: 'https://media.licdn.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/' }
  },
  {
    name: 'slack',
    // https://api.slack.com/methods/openid.connect.userInfo#examples (ids are per workspace: team_id + sub)
    profile: {
      tokenAuth: 'post', pkce: true, oidc: true, tokenExtra: { ok: true },
      idClaims: { sub: 'U0R7JM', 'https://slack.com/user_id': 'U0R7JM', 'https://slack.com/team_id': 'T0R7GR' },
      userinfo: { ok: true, sub: 'U0R7JM', 'https://slack.com/user_id': 'U0R7JM', 'https://slack.com/team_id': 'T0R7GR', name: 'krane', given_name: 'Kelly', picture: 'https://secure.gravatar.com/avatar/abc.png', 'https://slack.com/user_image_192': 'https://avatars.slack-edge.com/2019-01-01/abc_192.png', 'https://slack.com/team_name': 'kraneflannel' }
    },
    scope: 'openid profile',
    expect: { rawId: 'T0R7GR/U0R7JM', name: 'krane', picture: 'https://avatars.slack-edge.com/2019-01-01/abc_192.png' }
  },
  {
    name: 'vercel',
    // https://vercel.com/docs/sign-in-with-vercel/tokens (userinfo claims: sub, name, preferred_username, picture, email)
    profile: {
      tokenAuth: 'post', pkce: true, oidc: true,
      idClaims: { sub: '345e869043f1e55f8bdc837c', preferred_username: 'vera' },
      userinfo: { sub: '345e869043f1e55f8bdc837c', name: 'Vera Cell', preferred_username: 'vera', picture: 'https://api.vercel.com/www/avatar/abc', email: 'vera@example.com', email_verified: true }
    },
    scope: 'openid profile',
    expect: { rawId: '345e869043f1e55f8bdc837c', name: 'Vera Cell', picture: 'https://api.vercel.com/www/avatar/abc' }
  },
  {
    name: 'vk',
    // VK ID: https://id.vk.com/about/business/go/docs/en/vkid/latest/vk-id/connection/api-description
    // (device_id and state back to /oauth2/auth; user_info takes client_id and access_token in a POSTed form)
    profile: {
      tokenAuth: 'post', pkce: true, infoTokenIn: 'form', infoMethod: 'POST',
      callbackExtra: { device_id: 'b0f9a5e1-1d8c-4d3e-9a7c-2c6f1e0b7a11', type: 'code_v2', ext_id: 'x' },
      tokenEcho: ['device_id', 'state'],
      tokenExtra: { user_id: 1234567890, scope: 'vkid.personal_info', refresh_token: 'rt', id_token: 'header.payload.sig' },
      userinfo: { user: { user_id: '1234567890', first_name: 'Ivan', last_name: 'Ivanov', avatar: 'https://sun1-1.userapi.com/s/v1/ig2/abc.jpg?size=200x200', sex: 2, verified: false } }
    },
    scope: 'vkid.personal_info',
    expect: { rawId: '1234567890', name: 'Ivan Ivanov', picture: 'https://sun1-1.userapi.com/s/v1/ig2/abc.jpg?size=200x200' }
  }
]

const { app: testApp, running } = await startCases(t, CASES)

t.test('builtinProviders: at least 35 names, from fastify-gatehouse/providers and the root, these among them', async (t) => {
  t.ok(builtinProviders.length >= 35, `${builtinProviders.length} built-ins`)
  t.same([...rootBuiltinProviders], [...builtinProviders], 'the same list from the root (deprecated there until 1.0)')
  t.same([...builtinProviders], [...OAUTH2_BUILTIN_NAMES])
  for (const c of CASES) t.ok(builtinProviders.includes(c.name), c.name)
  for (const name of builtinProviders) t.match(name, /^[a-z0-9]+$/, `${name}: the service's lowercase name`)
  const res = await testApp.browser().request(`${APP_URL}/auth/list`)
  t.same(await res.json(), CASES.map((c) => c.name), 'each mounted under its name')
})

for (const c of CASES) {
  t.test(`${c.name}: full login through its documented protocol and payload`, async (t) => {
    await loginCase(t, testApp, running.get(c.name)!, c)
  })
}

/** A user document of `c` with its changeable name replaced, and optionally its stable id. */
interface Recycle { name: string; rename: (doc: any, login: string, id?: string) => void }
const RECYCLE: Recycle[] = [
  { name: 'twitch', rename: (d, login, id) => { Object.assign(d.data[0], { login, display_name: login }, id === undefined ? {} : { id }) } },
  { name: 'reddit', rename: (d, login, id) => { Object.assign(d, { name: login }, id === undefined ? {} : { id }) } },
  { name: 'bitbucket', rename: (d, login, id) => { Object.assign(d, { username: login, display_name: login }, id === undefined ? {} : { uuid: id }) } },
  { name: 'kick', rename: (d, login, id) => { Object.assign(d.data[0], { name: login }, id === undefined ? {} : { user_id: Number(id) }) } },
  { name: 'huggingface', rename: (d, login, id) => { Object.assign(d, { preferred_username: login, name: login }, id === undefined ? {} : { sub: id }) } }
]

for (const r of RECYCLE) {
  t.test(`${r.name}: the user follows the stable id, not the changeable name`, async (t) => {
    const c = CASES.find((x) => x.name === r.name)!
    const run = running.get(r.name)!
    const original = structuredClone(run.profile.userinfo)
    t.teardown(() => { run.profile.userinfo = original })
    const first = await loginCase(t, testApp, run, c)

    // The same account renamed: the same user.
    const renamed = structuredClone(original) as any
    r.rename(renamed, 'brand-new-name')
    run.profile.userinfo = renamed
    const browser = testApp.browser()
    const again = JSON.parse((await browser.navigate(`${APP_URL}/auth/${r.name}/login`)).body) as { id: string }
    t.equal(again.id, first, 'renamed account: same user')

    // Another account that took the freed name (and the ID token's subject, for OIDC): another user.
    const taken = structuredClone(original) as any
    const otherId = r.name === 'kick' ? '9990001' : `${c.expect.rawId}0`
    r.rename(taken, 'brand-new-name', otherId)
    run.profile.userinfo = taken
    if (run.profile.idClaims !== undefined) run.profile.idClaims = { ...run.profile.idClaims, sub: otherId }
    const other = JSON.parse((await testApp.browser().navigate(`${APP_URL}/auth/${r.name}/login`)).body) as { id: string }
    if (run.profile.idClaims !== undefined) run.profile.idClaims = { ...run.profile.idClaims, sub: c.expect.rawId }
    t.not(other.id, first, 'another account with the old account\'s former name: another user')
  })
}

t.test('bad provider answers of the quirky ones: 502 GATEHOUSE_UPSTREAM, no session', async (t) => {
  const cases: Array<[string, string, (p: any) => void]> = [
    ['notion', 'a workspace-owned token names no person', (p) => { p.tokenExtra = { ...p.tokenExtra, owner: { workspace: true } } }],
    ['notion', 'an owner typed workspace, whatever else it holds', (p) => { p.tokenExtra = { ...p.tokenExtra, owner: { ...p.tokenExtra.owner, type: 'workspace' } } }],
    ['notion', 'an owner without its user', (p) => { p.tokenExtra = { ...p.tokenExtra, owner: { type: 'user' } } }],
    ['slack', 'userinfo answered 200 with ok: false', (p) => { p.userinfo = { ...p.userinfo, ok: false, error: 'invalid_auth' } }],
    ['slack', 'no workspace id', (p) => { p.userinfo = { ok: true, sub: 'U0R7JM', name: 'krane' } }],
    ['slack', 'the token endpoint answered 200 with an error object', (p) => { p.tokenExtra = { ok: false, error: 'invalid_code' } }],
    ['tiktok', 'an error code other than ok', (p) => { p.userinfo = { ...p.userinfo, error: { code: 'access_token_invalid', message: 'x', log_id: '1' } } }],
    ['naver', 'a result code other than 00', (p) => { p.userinfo = { ...p.userinfo, resultcode: '024', message: 'Authentication failed' } }],
    ['twitch', 'an empty data list', (p) => { p.userinfo = { data: [] } }],
    ['kick', 'data not a list', (p) => { p.userinfo = { data: { user_id: 1 }, message: 'OK' } }],
    ['linear', 'a GraphQL error instead of data', (p) => { p.userinfo = { errors: [{ message: 'authentication required' }] } }],
    ['dropbox', 'a wrongly typed account id', (p) => { p.userinfo = { account_id: { id: 1 }, name: { display_name: 'x' } } }],
    ['bitbucket', 'no uuid (a username alone is not an id)', (p) => { p.userinfo = { username: 'evzijst', display_name: 'Erik' } }]
  ]
  for (const [name, what, spoil] of cases) {
    const run = running.get(name)!
    const saved = { userinfo: run.profile.userinfo, tokenExtra: run.profile.tokenExtra }
    spoil(run.profile)
    const browser = testApp.browser()
    const nav = await browser.navigate(`${APP_URL}/auth/${name}/login`)
    Object.assign(run.profile, saved)
    t.equal(nav.res.status, 502, `${name}: ${what}`)
    t.match(JSON.parse(nav.body), { code: 'GATEHOUSE_UPSTREAM' }, `${name}: ${what}: the upstream code`)
    t.notOk(browser.cookieFor(`${APP_URL}/`, 'JWT'), `${name}: ${what}: no session`)
  }
})

t.test('vk: a callback value sent on to the token call is read like any callback field: too long is a 400, no session', async (t) => {
  const run = running.get('vk')!
  const saved = run.profile.callbackExtra
  run.profile.callbackExtra = { ...saved, device_id: 'd'.repeat(600) }
  t.teardown(() => { run.profile.callbackExtra = saved })
  const tokenCalls = run.standin.tokenRequests.length
  const browser = testApp.browser()
  const nav = await browser.navigate(`${APP_URL}/auth/vk/login`)
  t.equal(nav.res.status, 400)
  t.match(JSON.parse(nav.body), { code: 'GATEHOUSE_BAD_REQUEST' })
  t.equal(run.standin.tokenRequests.length, tokenCalls, 'the token endpoint was not called')
  t.notOk(browser.cookieFor(`${APP_URL}/`, 'JWT'), 'no session')
})

/** One login through `name`'s stand-in with its profile changed by `spoil` for that login only. */
async function spoiledLogin (name: string, spoil: (p: any) => void): Promise<{ status: number, body: any, session: boolean }> {
  const run = running.get(name)!
  // `spoil` replaces top-level fields only: a shallow copy restores the profile.
  const saved = { ...run.profile }
  spoil(run.profile)
  const browser = testApp.browser()
  try {
    const nav = await browser.navigate(`${APP_URL}/auth/${name}/login`)
    return { status: nav.res.status, body: JSON.parse(nav.body), session: browser.cookieFor(`${APP_URL}/`, 'JWT') !== undefined }
  } finally {
    for (const key of Object.keys(run.profile)) if (!(key in saved)) delete (run.profile as any)[key]
    Object.assign(run.profile, saved)
  }
}

t.test('figma: a token answer without token_type is taken (Figma documents none), one of another type is not', async (t) => {
  const bad = await spoiledLogin('figma', (p) => { p.tokenType = 'mac' })
  t.equal(bad.status, 502, 'token_type mac: refused')
  t.match(bad.body, { code: 'GATEHOUSE_UPSTREAM', details: 'token_type is not Bearer' })
  t.notOk(bad.session, 'no session')
  const c = CASES.find((x) => x.name === 'figma')!
  t.equal(running.get('figma')!.profile.tokenType, null, 'the documented answer (no token_type) is served again')
  await loginCase(t, testApp, running.get('figma')!, c)
})

t.test('a token answer without token_type from a provider not documented to omit it: 502, no session', async (t) => {
  for (const name of ['spotify', 'bitbucket', 'zoom']) {
    const res = await spoiledLogin(name, (p) => { p.tokenType = null })
    t.equal(res.status, 502, `${name}: refused`)
    t.match(res.body, { code: 'GATEHOUSE_UPSTREAM', details: 'no token_type' }, `${name}: the reason`)
    t.notOk(res.session, `${name}: no session`)
  }
})

t.test('reddit: its own User-Agent on the token and user calls; a generic one is throttled (502, no session)', async (t) => {
  // The stand-in answers a generic User-Agent as Reddit does (429): proves the Reddit-format one was sent above.
  const res = await spoiledLogin('reddit', (p) => { p.userAgent = /^android:/ })
  t.equal(res.status, 502)
  t.match(res.body, { code: 'GATEHOUSE_UPSTREAM' })
  t.notOk(res.session, 'no session')

  t.equal(builtinConfig('reddit', 'abc', 's').userAgent, 'web:{cid}:1.0 (fastify-gatehouse)', 'default: the app named by its client id')
  t.equal(builtinConfig('reddit', 'abc', 's', { userAgent: 'web:com.example.app:2.1 (by /u/ada)' } as never).userAgent, 'web:com.example.app:2.1 (by /u/ada)', 'the app\'s own')
})

t.test('reddit: a userAgent that is not printable ASCII fails registration, naming the option', async (t) => {
  for (const ua of ['web:x:1\r\nX-Injected: 1', '', 'ü'.repeat(3), 'x'.repeat(257)]) {
    const err = await bootError(async (app) => { await app.register(oauth2Provider, { name: 'reddit', cid: 'a', csecret: 'b', userAgent: ua } as never) })
    t.match(err, { code: 'GATEHOUSE_OPTION', option: 'oauth2.reddit.userAgent', message: /Reddit asks/ }, JSON.stringify(ua).slice(0, 40))
  }
  // The engine checks the header itself too, for configurations that skip the settings (prepared ones).
  const config = { ...builtinConfig('reddit', 'a', 'b'), userAgent: 'web:x:1\r\nX-Injected: 1' }
  const err = await bootError(async (app) => { await app.register(preparedOAuth2Provider, { config }) })
  t.match(err, { code: 'GATEHOUSE_OPTION', option: 'oauth2.reddit.userAgent', message: /printable ASCII/ }, 'the engine refuses it')
})

t.test('paypal: environment sandbox uses the sandbox hosts; live is the default; another value fails registration', async (t) => {
  const hosts = (o: Record<string, unknown>): string[] => {
    const cfg = builtinConfig('paypal', 'cid', 'secret', o as never)
    return [cfg.authURL, cfg.tokenURL, cfg.infoURL!].map((u) => new URL(u).host)
  }
  t.same(hosts({}), ['www.paypal.com', 'api-m.paypal.com', 'api-m.paypal.com'])
  t.same(hosts({ environment: 'live' }), ['www.paypal.com', 'api-m.paypal.com', 'api-m.paypal.com'])
  t.same(hosts({ environment: 'sandbox' }), ['www.sandbox.paypal.com', 'api-m.sandbox.paypal.com', 'api-m.sandbox.paypal.com'])
  const err = await bootError(async (app) => { await app.register(oauth2Provider, { name: 'paypal', cid: 'a', csecret: 'b', environment: 'test' } as never) })
  t.match(err, { code: 'GATEHOUSE_OPTION', option: 'oauth2.paypal.environment' })
  const other = await bootError(async (app) => { await app.register(oauth2Provider, { name: 'github', cid: 'a', csecret: 'b', environment: 'sandbox' } as never) })
  t.match(other, { code: 'GATEHOUSE_OPTION' }, 'a setting of another provider is refused')
})
