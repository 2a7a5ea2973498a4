/**
 * User ids as go-pkgz/auth v2 computes them: for each built-in provider, the id this package gives a user
 * document equals go-pkgz's for the same document, in each id mode (`idFrom`). The expected ids are computed here
 * from go-pkgz's documented rule, `<provider>_` + HashID(sha1, field) (HashID: a value that is already 40 hex digits
 * is kept, anything else is SHA-1 hex), independently of the product code; where go-pkgz's own provider tests
 * publish an id for the same data (v2/provider/providers_test.go, v2/token/user_test.go), that id is checked too.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { builtinConfig, type BuiltinProviderName, type OAuth2Overrides } from '../../../providers/oauth2/builtins.js'
import { toUserData } from '../../../providers/oauth2/engine.js'
import { userId } from '../../../lib/user.js'
import { oauth2Provider } from '../../../providers/index.js'
import { startStandin } from '../../helpers/oauth2-standin.js'
import { APP_URL, startApp } from '../../helpers/oauth2-app.js'

/** go-pkgz's rule, written out for the test: `<provider>_` + HashID(sha1, value). */
function goPkgzId (provider: string, value: string): string {
  const hashed = /^[0-9a-fA-F]{40}$/.test(value) ? value : createHash('sha1').update(value, 'utf8').digest('hex')
  return `${provider}_${hashed}`
}

async function idOf (name: BuiltinProviderName, doc: Record<string, unknown>, overrides: OAuth2Overrides = {}): Promise<string> {
  const cfg = builtinConfig(name, 'cid', 'secret', overrides)
  const mapped = await cfg.mapUser(doc, Buffer.from(JSON.stringify(doc)), { provider: name, tokenResponse: {} } as never)
  return toUserData(name, mapped).id
}

t.test('HashID: go-pkgz\'s own vectors (v2/token/user_test.go)', async (t) => {
  t.equal(userId('p', 'myid'), 'p_6e34471f84557e1713012d64a7477c71bfdac631')
  t.equal(userId('p', ''), 'p_da39a3ee5e6b4b0d3255bfef95601890afd80709')
  t.equal(userId('p', 'blah blah'), 'p_135a1e01bae742c4a576b20fd41a683f6483ca43')
  t.equal(userId('p', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'), 'p_da39a3ee5e6b4b0d3255bfef95601890afd80709', 'a sha1 already: kept as it is')
  t.equal(userId('p', 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709'), 'p_DA39A3EE5E6B4B0D3255BFEF95601890AFD80709', 'upper-case hex too (go-pkgz\'s pattern takes both)')
  t.equal(userId('p', 'da39a3ee5e6b4b0d3255bfef95601890afd8070'), goPkgzId('p', 'da39a3ee5e6b4b0d3255bfef95601890afd8070'), '39 hex digits are hashed')
  t.not(userId('p', 'da39a3ee5e6b4b0d3255bfef95601890afd8070'), 'p_da39a3ee5e6b4b0d3255bfef95601890afd8070')
})

const octocat = { login: 'octocat', id: 583231, name: 'The Octocat', avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4' }

t.test('github: login mode is go-pkgz\'s default; id mode hashes the numeric id (go-pkgz\'s GithubNumericID)', async (t) => {
  t.equal(await idOf('github', octocat, { idFrom: 'login' }), goPkgzId('github', 'octocat'))
  t.equal(await idOf('github', { login: 'lll', id: 1, name: 'test user' }, { idFrom: 'login' }), 'github_e80b2d2608711cbb3312db7c4727a46fbad9601a', 'go-pkgz test: login "lll"')
  t.equal(await idOf('github', octocat, { idFrom: 'id' }), goPkgzId('github', '583231'))
  t.equal(await idOf('github', octocat), goPkgzId('github', '583231'), 'the default here is the numeric id')
  t.not(await idOf('github', octocat, { idFrom: 'login' }), await idOf('github', octocat, { idFrom: 'id' }), 'the two modes differ')
  await t.rejects(idOf('github', { id: 583231 }, { idFrom: 'login' }), /login/, 'login mode without a login: malformed userinfo')
})

t.test('microsoft: graph mode hashes the Graph /me id (go-pkgz); sub mode the OIDC subject', async (t) => {
  const me = { id: '87d349ed-44d7-43e1-9a83-5f2406dee5bd', displayName: 'Adele Vance', givenName: 'Adele', surname: 'Vance' }
  t.equal(await idOf('microsoft', me, { idFrom: 'graph' }), goPkgzId('microsoft', me.id))
  const cfg = builtinConfig('microsoft', 'c', 's', { idFrom: 'graph' })
  t.equal(cfg.infoURL, 'https://graph.microsoft.com/v1.0/me', 'reads Graph /me, as go-pkgz')
  t.ok(cfg.scopes.includes('User.Read'), 'with User.Read, as go-pkgz')
  t.equal(await idOf('microsoft', { sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ', name: 'Grace' }), goPkgzId('microsoft', 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ'), 'sub mode (default)')
})

t.test('the other built-ins hash the field go-pkgz hashes', async (t) => {
  t.equal(await idOf('google', { sub: '1234567890', name: 'test user' }), 'google_01b307acba4f54f55aafc33bb06bbbf6ca803e9a', 'go-pkgz test: google sub')
  t.equal(await idOf('facebook', { id: 'myid', name: 'test user' }), 'facebook_6e34471f84557e1713012d64a7477c71bfdac631', 'go-pkgz test: facebook id')
  t.equal(await idOf('yandex', { id: '1234567890', display_name: 'Vasya P' }), 'yandex_01b307acba4f54f55aafc33bb06bbbf6ca803e9a', 'go-pkgz test: yandex id')
  t.equal(await idOf('discord', { id: '248533295981532', username: 'test_user' }), 'discord_9b472605c1318483fb4b88f9acf22cdd4219f9a0', 'go-pkgz test: discord id')
  t.equal(await idOf('battlenet', { id: 12345678, battletag: 'Player#1234' }), goPkgzId('battlenet', '12345678'))
  t.equal(await idOf('patreon', { data: { id: '0000000', attributes: { full_name: 'Corgi The Dev' } } }), goPkgzId('patreon', '0000000'))
  // go-pkgz's Twitter is OAuth 1.0a (v1.1 verify_credentials, `id_str`); ours is OAuth 2.0 (v2 users/me, `data.id`):
  // the same account number, so the same id.
  t.equal(await idOf('twitter', { data: { id: '124381237', name: 'Robert Downey Jr.', username: 'Bob' } }), 'twitter_63a6b20b6e17fb5e17f6c58b6223e3b760ad510e', 'go-pkgz test: twitter id_str')
})

t.test('idFrom and tenant: bad values are OptionsErrors naming the option', async (t) => {
  const bad: Array<[BuiltinProviderName, OAuth2Overrides, string]> = [
    ['github', { idFrom: 'graph' }, 'oauth2.github.idFrom'],
    ['microsoft', { idFrom: 'login' }, 'oauth2.microsoft.idFrom'],
    ['google', { idFrom: 'sub' }, 'oauth2.google.idFrom'],
    ['google', { tenant: 'common' }, 'oauth2.google.tenant'],
    ['microsoft', { tenant: '../evil' }, 'oauth2.microsoft.tenant'],
    ['microsoft', { tenant: 'a/b' }, 'oauth2.microsoft.tenant'],
    ['microsoft', { tenant: 'x?y=1' }, 'oauth2.microsoft.tenant'],
    ['microsoft', { tenant: '' }, 'oauth2.microsoft.tenant'],
    ['microsoft', { tenant: 42 as unknown as string }, 'oauth2.microsoft.tenant']
  ]
  for (const [name, o, option] of bad) t.throws(() => builtinConfig(name, 'c', 's', o), { code: 'GATEHOUSE_OPTION', option }, `${option} ${JSON.stringify(o)}`)
})

t.test('microsoft tenant: endpoints of that tenant; a tenant id pins the ID token issuer', async (t) => {
  const guid = '72f988bf-86f1-41af-91ab-2d7cd011db47'
  const byId = builtinConfig('microsoft', 'c', 's', { tenant: guid })
  t.equal(byId.authURL, `https://login.microsoftonline.com/${guid}/oauth2/v2.0/authorize`)
  t.equal(byId.tokenURL, `https://login.microsoftonline.com/${guid}/oauth2/v2.0/token`)
  t.equal(byId.oidc?.jwksURL, `https://login.microsoftonline.com/${guid}/discovery/v2.0/keys`)
  t.equal(byId.oidc?.issuer, `https://login.microsoftonline.com/${guid}/v2.0`, 'only that tenant\'s tokens')
  const org = builtinConfig('microsoft', 'c', 's', { tenant: 'organizations' })
  t.equal(org.authURL, 'https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize')
  t.equal(org.oidc?.issuer, 'https://login.microsoftonline.com/{tenantid}/v2.0', 'any tenant of the kind: per-token issuer')
  t.equal(builtinConfig('microsoft', 'c', 's', { tenant: 'contoso.onmicrosoft.com' }).tokenURL, 'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token')
  t.equal(builtinConfig('microsoft', 'c', 's', {}).authURL, 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize', 'default common')
  t.equal(builtinConfig('microsoft', 'c', 's', { tenant: guid, authURL: 'http://127.0.0.1:9/a' }).authURL, 'http://127.0.0.1:9/a', 'an explicit endpoint still wins')
})

t.test('over HTTP: full logins against local stand-ins give go-pkgz\'s ids (github by login, microsoft by Graph /me)', async (t) => {
  const tenant = '9188040d-6c67-4c5b-b112-36a304b66dad'
  const gh = await startStandin({ clientId: 'gh-cid', clientSecret: 'gh-secret', tokenAuth: 'post', pkce: true, userinfo: octocat })
  t.teardown(gh.close)
  // Graph /me: the object id, displayName; the ID token's sub is another (per-application) value.
  const me = { id: '87d349ed-44d7-43e1-9a83-5f2406dee5bd', displayName: 'Adele Vance' }
  const ms = await startStandin({ clientId: 'ms-cid', clientSecret: 'ms-secret', tokenAuth: 'post', pkce: true, oidc: true, idClaims: { sub: 'pairwise-sub-1', tid: tenant, ver: '2.0' }, userinfo: me })
  t.teardown(ms.close)
  ms.issuer = `${ms.url}/${tenant}/v2.0`
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', idFrom: 'login', authURL: `${gh.url}/authorize`, tokenURL: `${gh.url}/token`, infoURL: `${gh.url}/userinfo` })
    await app.register(oauth2Provider, {
      name: 'microsoft', cid: 'ms-cid', csecret: 'ms-secret', idFrom: 'graph', tenant,
      authURL: `${ms.url}/authorize`, tokenURL: `${ms.url}/token`, infoURL: `${ms.url}/userinfo`, jwksURL: `${ms.url}/jwks`, issuer: `${ms.url}/${tenant}/v2.0`
    })
  })
  t.teardown(app.close)
  const github = await app.browser().navigate(`${APP_URL}/auth/github/login`)
  t.equal(github.res.status, 200, github.body)
  t.equal(JSON.parse(github.body).id, goPkgzId('github', 'octocat'))
  const microsoft = await app.browser().navigate(`${APP_URL}/auth/microsoft/login`)
  t.equal(microsoft.res.status, 200, microsoft.body)
  t.same(JSON.parse(microsoft.body), { id: goPkgzId('microsoft', me.id), name: 'Adele Vance' })
  t.equal(ms.authorizeRequests.at(-1)!.get('scope'), 'openid profile User.Read', 'asks for User.Read, as go-pkgz')
})
