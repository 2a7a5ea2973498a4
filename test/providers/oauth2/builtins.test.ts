/**
 * The nine built-in OAuth2 providers, each through a full login in a cookie-following browser against a local
 * stand-in at the overridden endpoints, serving the user document shaped as that provider documents it:
 * the mapping (id hashed, name, picture handed to the avatar proxy), the minimal scopes, PKCE where the
 * provider takes it, the client authentication method it requires, the userinfo auth scheme, and ID-token
 * verification for the OIDC ones. The providers are registered as `oauth2Provider` plugins; one test goes
 * through the `fastify.auth.addProvider` wrapper. Plus registration errors, each an OptionsError naming the option.
 */
import t from 'tap'
import { userId } from '../../../lib/user.js'
import { OAUTH2_BUILTIN_NAMES, oauth2Provider, type BuiltinProviderName } from '../../../providers/index.js'
import { startStandin, type Standin, type StandinProfile } from '../../helpers/oauth2-standin.js'
import { APP_URL, bootError, currentUser, startApp } from '../../helpers/oauth2-app.js'

interface Case {
  name: BuiltinProviderName
  profile: Omit<StandinProfile, 'clientId' | 'clientSecret'>
  /** Overridden issuer, `{url}` replaced by the stand-in's URL. */
  issuer?: string
  scope: string | null
  expect: { rawId: string; name: string; picture: string | undefined }
}

const MS_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad'

const CASES: Case[] = [
  {
    name: 'github',
    // GET /user: https://docs.github.com/rest/users/users#get-the-authenticated-user
    profile: { tokenAuth: 'post', pkce: true, userinfo: { login: 'octocat', id: 583231, node_id: 'MDQ6VXNlcjU4MzIzMQ==', avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4', type: 'User', name: 'The Octocat', company: '@github' } },
    scope: null,
    expect: { rawId: '583231', name: 'The Octocat', picture: 'https://avatars.githubusercontent.com/u/583231?v=4' }
  },
  {
    name: 'google',
    // OpenID Connect userinfo + ID token: https://developers.google.com/identity/openid-connect/openid-connect
    profile: {
      tokenAuth: 'post', pkce: true, oidc: true,
      idClaims: { sub: '110169484474386276334', azp: 'google-cid', at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' },
      userinfo: { sub: '110169484474386276334', name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace', picture: 'https://lh3.googleusercontent.com/a/ACg8ocK', locale: 'en' }
    },
    issuer: '{url}',
    scope: 'openid profile',
    expect: { rawId: '110169484474386276334', name: 'Ada Lovelace', picture: 'https://lh3.googleusercontent.com/a/ACg8ocK' }
  },
  {
    name: 'facebook',
    // GET /me?fields=id,name,picture: https://developers.facebook.com/docs/graph-api/reference/user/picture
    profile: { tokenAuth: 'post', pkce: true, userinfo: { id: '10158722350987713', name: 'Jane Roe', picture: { data: { height: 50, is_silhouette: false, url: 'https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=1', width: 50 } } } },
    scope: 'public_profile',
    expect: { rawId: '10158722350987713', name: 'Jane Roe', picture: 'https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=1' }
  },
  {
    name: 'microsoft',
    // Microsoft identity platform v2 ID token (tenant-specific iss) + OIDC userinfo on Graph.
    profile: {
      tokenAuth: 'post', pkce: true, oidc: true,
      idClaims: { sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ', tid: MS_TENANT, ver: '2.0', name: 'Grace Hopper' },
      userinfo: { sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ', name: 'Grace Hopper', family_name: 'Hopper', given_name: 'Grace', picture: 'https://graph.microsoft.com/v1.0/me/photo/$value' }
    },
    issuer: '{url}/{tenantid}/v2.0',
    scope: 'openid profile',
    expect: { rawId: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ', name: 'Grace Hopper', picture: undefined }
  },
  {
    name: 'yandex',
    // GET https://login.yandex.ru/info?format=json with "Authorization: OAuth <token>"
    profile: { tokenAuth: 'post', pkce: true, infoAuthScheme: 'OAuth', userinfo: { id: '1000034426', login: 'ivan', client_id: 'yandex-cid', display_name: 'Ivan', real_name: 'Ivan Ivanov', first_name: 'Ivan', last_name: 'Ivanov', default_avatar_id: '131652443', is_avatar_empty: false, psuid: '1.AAceCw' } },
    scope: 'login:info login:avatar',
    expect: { rawId: '1000034426', name: 'Ivan', picture: 'https://avatars.yandex.net/get-yapic/131652443/islands-200' }
  },
  {
    name: 'battlenet',
    // GET https://oauth.battle.net/userinfo
    profile: { tokenAuth: 'basic', pkce: false, userinfo: { sub: '12345678', id: 12345678, battletag: 'Player#1234' } },
    scope: null,
    expect: { rawId: '12345678', name: 'Player#1234', picture: undefined }
  },
  {
    name: 'patreon',
    // GET /api/oauth2/v2/identity?fields[user]=full_name,image_url (JSON:API)
    profile: { tokenAuth: 'post', pkce: false, userinfo: { data: { attributes: { full_name: 'Corgi The Dev', image_url: 'https://c8.patreon.com/2/200/12345' }, id: '12345', type: 'user' }, links: { self: 'https://www.patreon.com/api/oauth2/v2/user/12345' } } },
    scope: 'identity',
    expect: { rawId: '12345', name: 'Corgi The Dev', picture: 'https://c8.patreon.com/2/200/12345' }
  },
  {
    name: 'discord',
    // GET /users/@me: https://discord.com/developers/docs/resources/user#user-object
    // PKCE: https://discord.com/.well-known/oauth-authorization-server lists code_challenge_methods_supported ["S256"]
    profile: { tokenAuth: 'post', pkce: true, userinfo: { id: '80351110224678912', username: 'nelly', discriminator: '0', global_name: 'Nelly', avatar: '8342729096ea3675442027381ff50dfe', verified: true, flags: 64 } },
    scope: 'identify',
    expect: { rawId: '80351110224678912', name: 'Nelly', picture: 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png' }
  },
  {
    name: 'twitter',
    // GET /2/users/me?user.fields=profile_image_url
    profile: { tokenAuth: 'basic', pkce: true, userinfo: { data: { id: '2244994945', name: 'Developers', username: 'XDevelopers', profile_image_url: 'https://pbs.twimg.com/profile_images/1/xdev_normal.jpg' } } },
    scope: 'users.read tweet.read',
    expect: { rawId: '2244994945', name: 'Developers', picture: 'https://pbs.twimg.com/profile_images/1/xdev_normal.jpg' }
  }
]

const standins = new Map<string, Standin>()
for (const c of CASES) {
  const s = await startStandin({ ...c.profile, clientId: `${c.name}-cid`, clientSecret: `${c.name}-secret` })
  standins.set(c.name, s)
  t.teardown(s.close)
}
// Microsoft signs per tenant: https://login.microsoftonline.com/<tid>/v2.0.
standins.get('microsoft')!.issuer = `${standins.get('microsoft')!.url}/${MS_TENANT}/v2.0`

const testApp = await startApp(async (app) => {
  for (const c of CASES) {
    const s = standins.get(c.name)!
    const oidc = c.issuer === undefined ? {} : { jwksURL: `${s.url}/jwks`, issuer: c.issuer.replace('{url}', s.url) }
    await app.register(oauth2Provider, {
      name: c.name, cid: `${c.name}-cid`, csecret: `${c.name}-secret`,
      authURL: `${s.url}/authorize`, tokenURL: `${s.url}/token`, infoURL: `${s.url}/userinfo`, ...oidc
    })
  }
})
t.teardown(testApp.close)

t.test('the first nine are built-ins and all are listed', async (t) => {
  // The others have their own files: builtins-social.test.ts, builtins-presets.test.ts.
  t.same(OAUTH2_BUILTIN_NAMES.slice(0, CASES.length), CASES.map((c) => c.name))
  const res = await testApp.browser().request(`${APP_URL}/auth/list`)
  t.same(await res.json(), CASES.map((c) => c.name))
})

for (const c of CASES) {
  t.test(`${c.name}: full login through its documented protocol and payload`, async (t) => {
    const s = standins.get(c.name)!
    const browser = testApp.browser()
    const nav = await browser.navigate(`${APP_URL}/auth/${c.name}/login?site=site-${c.name}`)
    t.equal(nav.res.status, 200, `login ends in the user JSON (${nav.body})`)
    t.same(nav.hops.map((h) => h.status), [302, 302, 200], 'app login → provider authorize → app callback')

    const authz = s.authorizeRequests.at(-1)!
    t.equal(authz.get('client_id'), `${c.name}-cid`)
    t.equal(authz.get('redirect_uri'), `${APP_URL}/auth/${c.name}/callback`, 'exact callback URL')
    t.equal(authz.get('scope'), c.scope, 'minimal scopes')
    t.equal(authz.get('code_challenge_method'), c.profile.pkce ? 'S256' : null, c.profile.pkce ? 'PKCE S256 sent' : 'no PKCE where undocumented')
    t.equal(authz.has('nonce'), c.profile.oidc === true, 'nonce only for OIDC providers')
    t.equal(s.tokenRequests.at(-1)!.basic, c.profile.tokenAuth === 'basic', `client authenticates by ${c.profile.tokenAuth}`)
    t.match(s.infoAuth.at(-1), new RegExp(`^${c.profile.infoAuthScheme ?? 'Bearer'} `), 'userinfo auth scheme')

    const user = JSON.parse(nav.body) as Record<string, unknown>
    t.same(user, { id: userId(c.name, c.expect.rawId), name: c.expect.name }, 'mapped user (id hashed, provider id never exposed)')
    t.equal(testApp.avatars.at(-1), c.expect.picture, 'picture link handed to the avatar proxy')

    const me = await currentUser(browser)
    t.equal(me.status, 200, 'session cookie works')
    t.equal(me.body.id, userId(c.name, c.expect.rawId))
    const claims = await testApp.app.auth.tokens.parse(browser.cookieFor(`${APP_URL}/`, 'JWT')!)
    t.same(claims.aud, [`site-${c.name}`], 'site became aud')
    t.notOk(browser.cookieFor(`${APP_URL}/auth/${c.name}/callback`, `gatehouse-oauth2-${c.name}`), 'handshake cookie cleared')
  })
}

t.test('microsoft (through fastify.auth.addProvider): the issuer must be the tenant of the token', async (t) => {
  // The stand-in signs as <its url>/<tenant>/v2.0, which this template (another host) does not produce.
  const app = await startApp((app) => {
    const s = standins.get('microsoft')!
    app.auth.addProvider('microsoft', 'microsoft-cid', 'microsoft-secret', {
      authURL: `${s.url}/authorize`, tokenURL: `${s.url}/token`, infoURL: `${s.url}/userinfo`, jwksURL: `${s.url}/jwks`,
      issuer: `http://127.0.0.1:1/{tenantid}/v2.0`
    })
  })
  t.teardown(app.close)
  t.same(app.app.auth.providers(), ['microsoft'], 'mounted once the app started')
  const nav = await app.browser().navigate(`${APP_URL}/auth/microsoft/login`)
  t.equal(nav.res.status, 401)
  t.match(JSON.parse(nav.body), { error: 'id token rejected', details: /issuer/, code: 'GATEHOUSE_UNAUTHORIZED' })
})

t.test('registration errors: the app does not start, an OptionsError names the option', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a name that is no built-in, without endpoints', { name: 'myspace', cid: 'a', csecret: 'b' }, 'oauth2.myspace.endpoint'],
    ['an inherited property name', { name: 'toString', cid: 'a', csecret: 'b' }, 'oauth2.toString.endpoint'],
    ['no name', { cid: 'a', csecret: 'b' }, 'oauth2.name'],
    ['an empty client id', { name: 'github', cid: '', csecret: 'b' }, 'oauth2.github.cid'],
    ['an empty client secret', { name: 'github', cid: 'a', csecret: '' }, 'oauth2.github.csecret'],
    ['a non-http authURL', { name: 'github', cid: 'a', csecret: 'b', authURL: 'ftp://x' }, 'oauth2.github.authURL'],
    ['jwksURL on a provider that is not OpenID Connect', { name: 'github', cid: 'a', csecret: 'b', jwksURL: 'http://x/jwks' }, 'oauth2.github.jwksURL'],
    ['a misspelt override', { name: 'github', cid: 'a', csecret: 'b', tokenUrl: 'http://x' }, 'oauth2.github.tokenUrl'],
    ['a negative timeout', { name: 'github', cid: 'a', csecret: 'b', timeout: -1 }, 'oauth2.github.timeout'],
    ['a 0.x duration name', { name: 'github', cid: 'a', csecret: 'b', timeoutMs: 5000 }, 'oauth2.github.timeoutMs']
  ]
  for (const [what, opts, option] of cases) {
    const err = await bootError(async (app) => { await app.register(oauth2Provider, opts as never) })
    t.match(err, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, what)
  }

  // Through the wrapper: the same checks, reported when the app starts.
  t.match(await bootError((app) => { app.auth.addProvider('github', '', 'b') }), { code: 'GATEHOUSE_OPTION', option: 'oauth2.github.cid' }, 'wrapper: empty client id')
  t.match(await bootError((app) => { app.auth.addProvider('myspace', 'a', 'b') }), { code: 'GATEHOUSE_OPTION', option: 'oauth2.myspace.endpoint' }, 'wrapper: unknown built-in')

  const twice = await bootError(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'a', csecret: 'b' })
    app.auth.addProvider('github', 'a', 'b')
  })
  t.match(twice, { code: 'GATEHOUSE_OPTION', option: 'providers', message: /two providers named "github"/ }, 'a name is taken once')
  t.equal(await bootError(async (app) => { await app.register(oauth2Provider, { name: 'github', cid: 'a', csecret: 'b' }) }), undefined, 'a good registration starts')
})
