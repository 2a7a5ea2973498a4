/**
 * The newcomer's trial of issue 49 ("Must show"), scripted: five client tasks done from the packed tarball by
 * following only the docs, with the guesses counted. Every piece of code, option and command a task uses is taken
 * from a documentation page by `Docs` (a code block, or a line of one, found by what the page says); the only
 * changes made to them are the reader's own values, listed as substitutions (this machine's addresses and ports for
 * the docs' example.com and localhost:3000, free ports, test secrets). Whatever a task needs that no page says
 * would be a guess: `Docs` records it with the reason, the task goes on with what a reader would have had to
 * invent, and the test fails on any. The output gives the count per task, 0 each.
 *
 * The tasks, each an app built from the README's tutorial (`app.ts`, its `.env` made by the tutorial's own commands)
 * with the options the guides add, run with the newest supported Node from the installed tarball:
 *
 * 1. a Fastify API: the tutorial as written, Alice signs in and calls `/api/me`;
 * 2. a device-code CLI: openid-client against http://localhost, the person signs in on the package's sign-in page
 *    (the app has no `/login`) in Chromium and approves; the CLI calls the API with its Bearer token;
 * 3. a mobile app through an external provider: the app opens `/authorize` in the system browser (Chromium), the
 *    person signs in through the dev OAuth2 server, the code comes back to `gatehouse-demo:/callback`, the app trades
 *    it and calls the API;
 * 4. an SPA on another origin: docs/guide/spa.md's page as written, on 127.0.0.1 beside the API on localhost;
 * 5. a go-pkgz service being replaced: a Go cookie token (expired, within the Go cookie's lifetime) becomes a session.
 */
import t from 'tap'
import { createHmac } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { codeBlocks, root } from '../docs/pages.js'
import { newestOf, supportedNodes } from '../helpers/node-binaries.js'
import { freePort } from '../helpers/redis-server.js'
import { footprint } from './footprint.js'
import { packBuild, run, type Run } from './packed.js'
import { TUTORIAL, tutorialApp, tutorialCommands } from './scratch-apps.js'
import { startApp, startArgs, userEnv } from './tutorial-run.js'
import { spawn } from 'node:child_process'
import { chromiumBrowser, chromiumMissing } from '../e2e/browser/browser.js'

t.setTimeout(900_000)
const node = newestOf(supportedNodes().found)
const noBrowser = chromiumMissing()
const skip = node === undefined ? 'no supported Node (22.12+) at hand: .ci/run installs them' : noBrowser

/** What the docs give, found by what each page says; what they do not give is a guess of the task. */
class Docs {
  readonly guesses: Record<string, string[]> = {}
  readonly substitutions: string[] = []
  private readonly pages = new Map<string, string>()

  page (path: string): string {
    if (!this.pages.has(path)) this.pages.set(path, readFileSync(join(root, path), 'utf8'))
    return this.pages.get(path)!
  }

  /** The first match of `re` in the page (its first group, else the whole match); a guess of `task` when absent. */
  find (task: string, path: string, re: RegExp, guessed: string, why: string): string {
    const m = re.exec(this.page(path))
    if (m !== null) return m[1] ?? m[0]
    ;(this.guesses[task] ??= []).push(`${why} (not in ${path}: ${re})`)
    return guessed
  }

  /** The code block of `lang` in `section` of the page whose text matches `re`; a guess when absent. */
  block (task: string, path: string, section: string | undefined, lang: string, re: RegExp, why: string): string {
    const found = codeBlocks(this.page(path), section).find((b) => b.lang === lang && re.test(b.code))
    if (found !== undefined) return found.code
    ;(this.guesses[task] ??= []).push(`${why} (no ${lang} block matching ${re} in ${path}${section === undefined ? '' : ` § ${section}`})`)
    return ''
  }

  /** `text` with `from` replaced by the reader's own value (listed); a guess when the docs' value is not there. */
  substitute (task: string, text: string, from: string, to: string, why: string): string {
    if (!text.includes(from)) { (this.guesses[task] ??= []).push(`${why}: "${from}" is not where the docs put it`); return text }
    this.substitutions.push(`${task}: ${from} -> ${to} (${why})`)
    return text.replaceAll(from, to)
  }
}

if (skip !== undefined) {
  t.comment(`the client trial is skipped: ${skip}`)
  t.test('the five client tasks from the packed tarball', { skip }, async () => {})
} else {
  const docs = new Docs()
  const work = mkdtempSync(join(tmpdir(), 'gatehouse-trial-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const scratch = join(work, 'app')
  const sh = async (cmd: string, dir = scratch, input?: string): Promise<Run> => await run('bash', ['-e', '-c', cmd], dir, {}, 300_000, input, node)

  /** The tutorial's app.ts on `port`, with option lines added to its authPlugin options, registrations and imports. */
  function appWith (port: number, add: { options?: string[]; imports?: string[]; register?: string[] } = {}): string {
    let app = tutorialApp(port)
    const url = /^( {2}url: '[^']+')( +\/\/.*)?$/m
    if (add.options !== undefined) app = app.replace(url, (_l, opt: string, comment = '') => `${opt},${comment}\n${add.options!.map((o) => `  ${o}`).join(',\n')}`)
    if (add.imports !== undefined) app = `${add.imports.join('\n')}\n${app}`
    if (add.register !== undefined) app = app.replace('// protect routes with hooks', `${add.register.join('\n')}\n\n// protect routes with hooks`)
    return app
  }

  /** A tutorial folder: its `.env` made by the tutorial's commands (Alice's password piped to the hash CLI), the app. */
  async function startTask (name: string, app: string, port: number, env: Record<string, string> = {}): Promise<string> {
    const dir = join(scratch, name)
    mkdirSync(dir)
    writeFileSync(join(dir, 'app.ts'), app)
    const made = await sh(tutorialCommands().makeEnv, dir, 'alice-pw\n')
    if (made.code !== 0) throw new Error(`${name}: the tutorial's .env lines: ${made.stderr}`)
    const started = await startApp(node!, startArgs(node!), dir, env)
    t.teardown(started.stop)
    if (!started.log().includes('Server listening')) throw new Error(`${name}: the app did not start:\n${started.log().slice(-3000)}`)
    return `http://localhost:${port}`
  }

  /** A user's script started in `dir`: its output so far, a line written to its input, the JSON line it printed. */
  function script (dir: string, file: string): { out: () => string; write: (line: string) => void; printed: (key: string) => Promise<Record<string, unknown>> } {
    const child = spawn(node!.bin, [file], { cwd: dir, env: userEnv(node!), stdio: ['pipe', 'pipe', 'pipe'] })
    t.teardown(() => { child.kill() })
    let out = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { out += d.toString() })
    return {
      out: () => out,
      write: (line) => { child.stdin.write(`${line}\n`) },
      async printed (key) {
        while (!out.includes(`{"${key}"`)) {
          if (child.exitCode !== null) throw new Error(`${file} exited:\n${out.slice(-3000)}`)
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        return JSON.parse(out.split('\n').find((l) => l.startsWith(`{"${key}"`))!) as Record<string, unknown>
      }
    }
  }

  t.test('the tarball installs as the docs say, with the packages the tasks name', async (t) => {
    const { tarball, packed, sourceErrors } = await packBuild(work)
    t.same(sourceErrors, [], 'the package builds')
    t.equal(packed.code, 0, 'npm pack', { stderr: packed.stderr.slice(-2000) })
    mkdirSync(scratch)
    const [init, install] = TUTORIAL.setup.trimEnd().split('\n')
    t.equal((await sh(init!)).code, 0, init)
    const bare = await sh(docs.substitute('install', install!, 'fastify-gatehouse', tarball!, 'the packed tarball for the registry\'s package'))
    t.equal(bare.code, 0, install, { stderr: bare.stderr.slice(-2000) })
    t.comment(`Node ${node!.version} (${node!.label}), the newest of the supported ones at hand, as the package tests use`)
    const fp = footprint(join(scratch, 'node_modules'))
    t.comment(`the bare install: ${fp.packages.size} packages, ${fp.kib} KiB = ${(fp.kib * 1024 / 1e6).toFixed(1)} MB (10^6 bytes) by du -sk`)
    const cors = docs.find('spa', 'docs/toolkit/cors.md', /needs `(npm i @fastify\/cors@11)`/, 'npm i @fastify/cors', 'how to install the cors plugin\'s driver')
    const oidc = docs.find('cli', 'docs/guide/api-clients.md', /(openid-client)/, 'openid-client', 'which OAuth 2 library the CLI example uses')
    const extras = await sh(`${cors} && npm i ${oidc}`)
    t.equal(extras.code, 0, `${cors}; npm i ${oidc}`, { stderr: extras.stderr.slice(-2000) })
  })

  t.test('1. a Fastify API: the README tutorial, Alice signs in and calls /api/me', async (t) => {
    const port = await freePort()
    const base = await startTask('api', tutorialApp(port), port)
    const login = await fetch(`${base}/auth/local/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', passwd: 'alice-pw' }) })
    t.equal(login.status, 200)
    const cookies = login.headers.getSetCookie().map((c) => c.split(';')[0]!)
    const xsrf = cookies.find((c) => c.startsWith('XSRF-TOKEN='))!.slice('XSRF-TOKEN='.length)
    const me = await fetch(`${base}/api/me`, { headers: { cookie: cookies.join('; '), 'x-xsrf-token': xsrf } })
    t.match(await me.json(), { name: 'alice' })
  })

  /** The API's `/api/me` with a Bearer token, as each client calls it. */
  const meWith = async (base: string, token: string): Promise<unknown> => await (await fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${token}` } })).json()

  t.test('2. a device-code CLI: openid-client against localhost, the person signs in on the package\'s page and approves', async (t) => {
    const port = await freePort()
    const client = docs.find('cli', 'docs/guide/api-clients.md', /Register it as `(\{ id: 'demo-cli', kind: 'device' \})`/, "{ id: 'demo-cli', kind: 'device' }", 'how to register a device client')
    const base = await startTask('cli', appWith(port, { options: [`clients: [${client}]`] }), port)
    const local = docs.block('cli', 'docs/guide/api-clients.md', 'Trying it against http://localhost', 'ts', /allowInsecureRequests/, 'openid-client against http://localhost')
    const calls = docs.find('cli', 'docs/guide/api-clients.md', /`(initiateDeviceAuthorization\(config, \{\}\))` and `(?:pollDeviceAuthorizationGrant\(config, response\))`/, 'initiateDeviceAuthorization(config, {})', 'the device grant\'s calls')
    const poll = docs.find('cli', 'docs/guide/api-clients.md', /`(pollDeviceAuthorizationGrant\(config, response\))`/, 'pollDeviceAuthorizationGrant(config, response)', 'the device grant\'s polling')
    const cli = `import * as client from 'openid-client'
${docs.substitute('cli', local.trim(), 'http://localhost:3000', base, 'the app\'s address')}
const config = local
const response = await client.${calls}
console.log(JSON.stringify({ open: response.verification_uri_complete }))
const tokens = await client.${poll}
const me = await fetch('${base}/api/me', { headers: { authorization: \`Bearer \${tokens.access_token}\` } })
console.log(JSON.stringify({ me: await me.json() }))
`
    writeFileSync(join(scratch, 'cli', 'cli.mjs'), cli)
    const { printed } = script(join(scratch, 'cli'), 'cli.mjs')
    const { open } = await printed('open')
    const page = await (await (await chromiumBrowser()).newContext()).newPage()
    t.teardown(async () => { await page.context().close() })
    await page.goto(String(open))
    t.equal(new URL(page.url()).pathname, '/auth/sign-in', 'the first run: the package\'s sign-in page, no 404')
    await page.getByLabel('User name').fill('alice')
    await page.getByLabel('Password').fill('alice-pw')
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/device'), page.getByRole('button', { name: 'Sign in' }).click()])
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForSelector('#message')
    t.match(await printed('me'), { me: { name: 'alice' } }, 'the CLI calls the API as Alice')
  })

  t.test('3. a mobile app through an external provider (the dev OAuth2 server): the code back at its scheme', async (t) => {
    const port = await freePort()
    const mobile = docs.find('mobile', 'docs/guide/api-clients.md', /(clients: \[\{ id: 'demo-mobile'[^\n]*?\}\]) \}\)/, "clients: [{ id: 'demo-mobile', kind: 'native', redirectUris: ['gatehouse-demo:/callback'] }]", 'how to register a native client')
    const devBlock = docs.block('mobile', 'docs/providers/dev.md', undefined, 'ts', /^import \{ devProvider \}/, 'how to add the dev provider')
    const [devImport, , devRegister] = devBlock.trim().split('\n')
    const base = await startTask('mobile', appWith(port, { options: [mobile], imports: [devImport!], register: [devRegister!] }), port)
    const cliBlock = docs.block('mobile', 'docs/guide/api-clients.md', 'A CLI in 20 lines', 'ts', /authorizationCodeGrant/, 'the openid-client calls of a code flow with PKCE')
    const line = (re: RegExp): string => cliBlock.split('\n').find((l) => re.test(l)) ?? docs.find('mobile', 'docs/guide/api-clients.md', re, '', 'a line of the code flow')
    const redirect = docs.find('mobile', 'docs/guide/api-clients.md', /redirect_uri=(gatehouse-demo:\/callback)/, 'gatehouse-demo:/callback', 'the app\'s redirect URI')
    const local = docs.block('mobile', 'docs/guide/api-clients.md', 'Trying it against http://localhost', 'ts', /allowInsecureRequests/, 'openid-client against http://localhost')
    const app = `import * as client from 'openid-client'
import { createInterface } from 'node:readline'
${docs.substitute('mobile', docs.substitute('mobile', local.trim(), 'http://localhost:3000', base, 'the app\'s address'), "'demo-cli'", "'demo-mobile'", 'the native client\'s id')}
const config = local
const redirectUri = '${redirect}'
${line(/const verifier = /)}
${line(/const state = /)}
${line(/const challenge = /)}
${line(/console\.log\('Open'/)}
const callback = new Promise((resolve) => createInterface({ input: process.stdin }).once('line', (l) => resolve(new URL(l))))
${line(/const tokens = await client\.authorizationCodeGrant/)}
const me = await fetch('${base}/api/me', { headers: { authorization: \`Bearer \${tokens.access_token}\` } })
console.log(JSON.stringify({ me: await me.json() }))
`
    writeFileSync(join(scratch, 'mobile', 'phone.mjs'), app)
    const phone = script(join(scratch, 'mobile'), 'phone.mjs')
    while (!phone.out().includes('Open ')) await new Promise((resolve) => setTimeout(resolve, 100))
    const open = /Open (\S+)/.exec(phone.out())![1]!
    const page = await (await (await chromiumBrowser()).newContext()).newPage()
    t.teardown(async () => { await page.context().close() })
    const captured = new Promise<string>((resolve) => page.on('response', (r) => { const l = r.headers().location; if (l?.startsWith('gatehouse-demo:') === true) resolve(l) }))
    await page.goto(open)
    t.equal(new URL(page.url()).pathname, '/auth/sign-in')
    await page.getByRole('link', { name: 'Continue with the dev server' }).click()
    await page.waitForSelector('input[name=user]')
    await page.fill('input[name=user]', 'dora')
    await page.click('button[type=submit]:not([name])').catch(() => {})
    const stopped = new Promise<string>((resolve) => setTimeout(() => resolve(`no redirect to the app's scheme; the tab is at ${page.url()}`), 30_000).unref())
    const location = await Promise.race([captured, stopped])
    t.match(location, /^gatehouse-demo:\/callback\?code=/, 'the code at the app\'s scheme, no confirmation: the app opened the sign-in')
    phone.write(location)
    t.match(await phone.printed('me'), { me: { name: 'dora' } }, 'the phone app calls the API as the provider\'s user')
  })

  t.test('4. an SPA on another origin: the guide\'s page as written, Bearer without credentials', async (t) => {
    const port = await freePort()
    const spaPort = await freePort()
    const spaOrigin = `http://127.0.0.1:${spaPort}`
    const server = docs.block('spa', 'docs/guide/spa.md', 'Tokens in the page: the spa client', 'ts', /kind: 'spa'/, 'the spa client\'s server setup')
    const cors = docs.substitute('spa', server.split('\n').find((l) => l.includes('corsPlugin')) ?? '', 'https://spa.example.com', spaOrigin, 'the page\'s origin')
    const toolkit = docs.find('spa', 'docs/toolkit/index.md', /`import \{ pingPlugin, … \} from '(fastify-gatehouse\/toolkit)'`/, 'fastify-gatehouse/toolkit', 'where the toolkit plugins are imported from')
    const option = (key: string): string => server.split('\n').find((l) => l.trim().startsWith(`${key}: `))?.trim().replace(/,$/, '') ?? docs.find('spa', 'docs/guide/spa.md', new RegExp(`^ *(${key}: .*?),?$`, 'm'), '', `the spa server's ${key} option`)
    const clientLine = docs.substitute('spa', option('clients'), 'https://spa.example.com/callback', 'http://127.0.0.1/callback', 'a loopback redirect URI while developing (any port, as the guide says)')
    const base = await startTask('spa', appWith(port, { options: [option('login'), clientLine], imports: [`import { corsPlugin } from '${toolkit}'`], register: [cors] }), port)
    const script = docs.substitute('spa', docs.block('spa', 'docs/guide/spa.md', 'Tokens in the page: the spa client', 'js', /finishSignIn/, 'the spa\'s page'), 'https://api.example.com', base, 'the API\'s address')
    const page = Fastify()
    page.get('/*', async (_req, reply) => await reply.type('text/html').send(`<!doctype html><button id="go" onclick="signIn()">Sign in</button><pre id="out"></pre><script>${script}
if (location.pathname === '/callback') finishSignIn().then(() => api('/api/me')).then(async (r) => { out.textContent = (await r.json()).name })</script>`))
    await page.listen({ port: spaPort, host: '127.0.0.1' })
    t.teardown(() => page.close())
    const tab = await (await (await chromiumBrowser()).newContext()).newPage()
    t.teardown(async () => { await tab.context().close() })
    await tab.goto(`${spaOrigin}/`)
    await Promise.all([tab.waitForURL((u) => u.pathname === '/auth/sign-in'), tab.click('#go')])
    await tab.getByLabel('User name').fill('alice')
    await tab.getByLabel('Password').fill('alice-pw')
    await Promise.all([tab.waitForSelector('#approve'), tab.getByRole('button', { name: 'Sign in' }).click()])
    await Promise.all([tab.waitForURL((u) => u.origin === spaOrigin), tab.click('#approve')])
    await tab.waitForFunction(() => (globalThis as unknown as { out: { textContent: string } }).out.textContent !== '')
    t.equal(await tab.textContent('#out'), 'alice', 'the page signed in and called the API with its Bearer token')
  })

  t.test('5. a go-pkgz service being replaced: an expired Go cookie token within its cookie\'s life becomes a session', async (t) => {
    const port = await freePort()
    const issuer = docs.find('go', 'docs/guide/migrating-from-go-pkgz.md', /^ {2}(issuer: '[^']+')/m, "issuer: 'my-go-service'", 'the Go service\'s issuer')
    const migration = docs.find('go', 'docs/guide/migrating-from-go-pkgz.md', /^(migration: \{ goPkgz: \{ secret: process\.env\.GO_AUTH_SECRET!, maxAge: '31d' \} \})$/m, "migration: { goPkgz: { secret: process.env.GO_AUTH_SECRET!, maxAge: '31d' } }", 'the maxAge option')
    const GO_SECRET = 'the Go service secret'
    const base = await startTask('go', appWith(port, { options: [issuer, migration] }), port, { GO_AUTH_SECRET: GO_SECRET })
    // What the Go service left in a browser: its JWT and XSRF-TOKEN cookies, the token signed as go-pkgz signs it,
    // expired an hour ago (TokenDuration 15 minutes), its cookie still alive.
    const now = Math.floor(Date.now() / 1000)
    const claims = { iss: issuer.split("'")[1], aud: 'my-site', exp: now - 3600, iat: now - 3600 - 900, jti: 'go-session-1', user: { name: 'gopher', id: 'github_0123' } }
    const input = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
    const token = `${input}.${createHmac('sha256', GO_SECRET).update(input).digest('base64url')}`
    const res = await fetch(`${base}/api/me`, { headers: { cookie: `JWT=${token}; XSRF-TOKEN=go-session-1`, 'x-xsrf-token': 'go-session-1' } })
    t.equal(res.status, 200, 'the user stays signed in')
    t.match(await res.json(), { name: 'gopher', id: 'github_0123' }, 'as the same user, the same id')
    t.ok(res.headers.getSetCookie().some((c) => /^JWT=[^;]+\./.test(c)), 'with a session of the package in its cookie')
  })

  t.test('the guesses, per task: none', async (t) => {
    for (const s of docs.substitutions) t.comment(`substitution: ${s}`)
    for (const task of ['install', 'api', 'cli', 'mobile', 'spa', 'go']) {
      const guesses = docs.guesses[task] ?? []
      t.comment(`${task}: ${guesses.length} guesses${guesses.length === 0 ? '' : `: ${guesses.join('; ')}`}`)
      t.same(guesses, [], `${task}: 0 guesses`)
    }
  })
}
