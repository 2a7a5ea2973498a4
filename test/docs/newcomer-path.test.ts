/**
 * The newcomer's way from the README to a GitHub login, by links only (issue 22's "Must show"): the README's
 * GitHub section links to the step-by-step page, whose steps name the callback URL to register at GitHub and the
 * login route; an app built from the README's tutorial and GitHub lines sends GitHub exactly that callback URL,
 * and `/auth/user` (step 4) is the route that answers the user. The login itself, through a stand-in that speaks
 * GitHub's protocol, is test/oauth2/builtins.test.ts ("github: full login").
 */
import t from 'tap'
import Fastify from 'fastify'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import authPlugin, { directProvider, oauth2Provider } from '../../index.js'
import { root, tutorialBlocks } from './pages.js'

const readme = readFileSync(join(root, 'README.md'), 'utf8')
const steps = readFileSync(join(root, 'docs/providers/oauth2.md'), 'utf8')
const stepSection = /^## Step by step: sign in with GitHub\n([\s\S]*?)^## /m.exec(steps)?.[1] ?? ''
const tutorialUrl = /url: '([^']+)'/.exec(tutorialBlocks().app)?.[1]

t.test('the README links its GitHub section to the steps, and the steps exist', async (t) => {
  const github = /^### Add "Sign in with GitHub"\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? ''
  t.match(github, '](docs/providers/oauth2.md#step-by-step-sign-in-with-github)', 'the link (its anchor is checked by links.test.ts)')
  t.match(stepSection, /^1\. Open https:\/\/github\.com\/settings\/developers/m, 'where to register the app')
  t.ok(tutorialUrl, 'the tutorial sets url')
  t.match(stepSection, `${tutorialUrl}/auth/github/callback`, 'the callback URL for the tutorial\'s url')
  t.match(stepSection, `${tutorialUrl}/auth/github/login?from=/`, 'the login address')
})

t.test('the tutorial app with the README\'s GitHub line sends GitHub the callback URL the steps name', async (t) => {
  process.env.GITHUB_CID = 'Iv1.newcomer'
  process.env.GITHUB_CSEC = 'newcomer-secret'
  t.teardown(() => { delete process.env.GITHUB_CID; delete process.env.GITHUB_CSEC })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: 'newcomer-path-secret-0123456789-0123456789', url: tutorialUrl! })
  await app.register(directProvider, { name: 'local', checker: async () => false })
  // The README's line, as written there.
  await app.register(oauth2Provider, { name: 'github', cid: process.env.GITHUB_CID!, csecret: process.env.GITHUB_CSEC! })
  const host = new URL(tutorialUrl!).host
  const login = await app.inject({ url: '/auth/github/login?from=/', headers: { host } })
  t.equal(login.statusCode, 302)
  const to = new URL(String(login.headers.location))
  t.equal(`${to.origin}${to.pathname}`, 'https://github.com/login/oauth/authorize', 'to GitHub\'s authorization page')
  t.equal(to.searchParams.get('client_id'), 'Iv1.newcomer')
  t.equal(to.searchParams.get('redirect_uri'), `${tutorialUrl}/auth/github/callback`, 'the callback URL registered at GitHub')
  const user = await app.inject({ url: '/auth/user', headers: { host } })
  t.equal(user.statusCode, 401, 'step 4\'s /auth/user: the user once signed in, 401 before')
})
