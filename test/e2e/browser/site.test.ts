/**
 * The documentation site as a reader gets it: `typedoc` (the `npm run docs` configuration) builds the README, the
 * guides, the provider, toolkit and reference pages and the API reference into a temporary folder, a static
 * server on port 0 serves it, and headless Chromium opens it. Every built page answers 200 and every internal
 * link of every page resolves (file and anchor); every markdown page opens in Chromium without a script error
 * and with the navigation; the search finds "GitHub" and "rate limit"; and a newcomer gets from the home page to
 * the GitHub provider's step-by-step by clicking links. Screenshots of the home page and the GitHub page go to
 * .tap/screenshots/site/; `npm run screenshots` also writes them to docs/screenshots/. Every markdown page sits
 * in one of the site's groups (none in TypeDoc's catch-all "Documents"), and each entry of a page's contents reads
 * as its heading does (TypeDoc drops inline code from it).
 *
 * The site is built once, before any test starts and outside the browser's own timeout: typedoc takes about 40 s
 * on a quiet 2-core machine and minutes on a loaded one, so the file's timeout allows for that. When `npm run docs`
 * built docs/api after the last change of anything TypeDoc reads (as CI does before the tests), that site is the one
 * opened, and TypeDoc does not run again.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { inflateSync } from 'node:zlib'
import type { AddressInfo } from 'node:net'
import { chromiumMissing, launch, type TestBrowser } from './browser.js'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const missing = chromiumMissing()
const toDocs = process.env.GATEHOUSE_SCREENSHOTS === 'docs'
/**
 * Building the site (40 s on a quiet 2-core machine, 257 s measured at a load of about 20: up to 10 minutes) and
 * checking it in Chromium (up to 5 more).
 */
const BUILD_TIMEOUT_MS = 10 * 60_000
const BROWSER_TIMEOUT_MS = 5 * 60_000
t.setTimeout(BUILD_TIMEOUT_MS + BROWSER_TIMEOUT_MS)

/**
 * Runs typedoc with the project's configuration into `out`; resolves to its output when it fails. Without
 * TypeScript's type check of the same program (`--skipErrorChecking`, a third of typedoc's time): the TypeScript
 * graph's tests check it (`tsc -b`, test/types/entries.test.ts), and `npm run docs` still checks it; typedoc's own
 * warnings (links, exports) still fail this build. Without NODE_V8_COVERAGE: typedoc runs none of this project's code.
 */
async function buildSite (out: string): Promise<{ code: number | null; output: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && k !== 'NODE_V8_COVERAGE' && !k.startsWith('TAP')))
  const child = spawn(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--skipErrorChecking', '--out', out], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  const [code] = await once(child, 'close') as [number | null]
  return { code, output }
}

/** What TypeDoc reads (typedoc.json: the entries' program, the README, the pages of docs/, its own settings). */
const SITE_INPUTS = ['typedoc.json', 'package.json', 'tsconfig.base.json', 'tsconfig.build.json', 'README.md', 'CHANGELOG.md', 'CONTRIBUTING.md',
  'index.ts', 'auth.ts', 'compat.ts', 'toolkit.ts', 'testing.ts', 'augment.ts', 'toolkit-augment.ts', 'lib', 'plugins', 'providers', 'servers', 'stores', 'hooks', 'example', 'bench', 'docs']

/** The newest modification time under `path` (docs/api, the site itself, left out), and which file has it. */
function newest (path: string): { ms: number; file: string } {
  const full = join(root, path)
  if (!existsSync(full) || path === join('docs', 'api')) return { ms: 0, file: '' }
  const stat = statSync(full)
  if (!stat.isDirectory()) return { ms: stat.mtimeMs, file: path }
  return readdirSync(full).map((f) => newest(join(path, f))).reduce((a, b) => b.ms > a.ms ? b : a, { ms: 0, file: '' })
}

/**
 * Whether docs/api, the site `npm run docs` built (CI builds it before the tests, with TypeDoc's type check), is
 * newer than everything TypeDoc reads: then it is the site these sources make, and building it again would cost
 * about 20 CPU seconds for the same pages. Otherwise (no site yet, or a file changed since) this file builds its own.
 */
function siteOfNpmRunDocs (): { fresh: boolean; why: string } {
  const index = join(root, 'docs', 'api', 'index.html')
  if (!existsSync(index)) return { fresh: false, why: 'no docs/api: npm run docs has not run' }
  const site = statSync(index).mtimeMs
  const input = SITE_INPUTS.map(newest).reduce((a, b) => b.ms > a.ms ? b : a, { ms: 0, file: '' })
  return input.ms < site
    ? { fresh: true, why: `docs/api is newer than every input, the newest ${input.file}` }
    : { fresh: false, why: `${input.file} changed after docs/api was built` }
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.md': 'text/plain; charset=utf-8'
}

/** A static file server over `dir` on a loopback port of the OS's choosing. */
async function serve (dir: string): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname))
    let file = join(dir, path)
    if (!file.startsWith(dir)) { res.writeHead(403).end(); return }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html')
    if (!existsSync(file)) { res.writeHead(404).end('not found'); return }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** Every file under `dir`, relative to it, with `/` separators. */
function files (dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(dir, join(under, e.name)) : [join(under, e.name).split(sep).join('/')])
}

/** The ids a page defines, for its anchors. */
const ids = (html: string): Set<string> => new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!))

/** The navigation data of a built site (assets/navigation.js: base64 of deflated JSON). */
function navigation (out: string): Array<{ text: string; children?: Array<{ text: string; path?: string }> }> {
  const script = readFileSync(join(out, 'assets', 'navigation.js'), 'utf8')
  return JSON.parse(inflateSync(Buffer.from(/"([^"]+)"/.exec(script)![1]!, 'base64')).toString()) as ReturnType<typeof navigation>
}

/** The text of an HTML fragment: tags dropped, the common entities decoded. */
const text = (html: string): string => html.replace(/<[^>]*>/g, '').replace(/&(lt|gt|quot|#39|#x27|amp);/g, (_, e: string) =>
  ({ lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'", amp: '&' })[e]!).trim()

if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('the documentation site in Chromium', { skip: missing }, async () => {})
} else {
  const reuse = siteOfNpmRunDocs()
  let out = join(root, 'docs', 'api')
  let built: { code: number | null; output: string } | undefined
  if (reuse.fresh) {
    t.comment(`the site of \`npm run docs\` (${reuse.why}): not built again`)
  } else {
    out = mkdtempSync(join(tmpdir(), 'gatehouse-site-'))
    const temporary = out
    t.teardown(() => rmSync(temporary, { recursive: true, force: true }))
    const started = Date.now()
    built = await buildSite(out)
    t.comment(`typedoc built the site in ${((Date.now() - started) / 1000).toFixed(1)} s (${reuse.why})`)
  }

  t.test('typedoc builds the site (warnings are errors)', async (t) => {
    if (built === undefined) {
      // TypeDoc writes nothing when a warning (an error here) or a type error stops it: a site newer than every input
      // was built by a run that passed, with the type check this file's own build skips.
      t.ok(reuse.fresh, `npm run docs built it after the last change of its inputs (${reuse.why})`)
    } else {
      t.equal(built.code, 0, 'exit code 0', { output: built.output.slice(-3000) })
    }
  })

  t.test('every markdown page is in one of the site\'s groups, and its contents read as its headings', async (t) => {
    const { groupOrder } = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { groupOrder: string[] }
    const groups = navigation(out)
    const catchAll = groups.filter((g) => !groupOrder.includes(g.text) && (g.children ?? []).some((c) => c.path?.startsWith('documents/') === true))
    t.same(catchAll.map((g) => `${g.text}: ${(g.children ?? []).map((c) => c.text).join(', ')}`), [], 'no page in a group of its own ("Documents")')
    const wrong: string[] = []
    for (const p of files(out).filter((f) => f.startsWith('documents/'))) {
      const html = readFileSync(join(out, p), 'utf8')
      const headings = new Map([...html.matchAll(/<h[1-6] id="([^"]+)"[^>]*>([\s\S]*?)<a href="#[^"]*" aria-label="Permalink"/g)].map((m) => [m[1]!, text(m[2]!)]))
      for (const [, id, entry] of html.matchAll(/<a href="#([^"]+)"><span>([^<]*)<\/span><\/a>/g)) {
        const heading = headings.get(id!)
        if (heading !== undefined && text(entry!) !== heading) wrong.push(`${p}: contents "${text(entry!)}" for the heading "${heading}"`)
      }
    }
    t.same(wrong, [], 'no entry lost its inline code')
  })

  t.test('the search index invents no word: every prefix search can run in the browser', async (t) => {
    // lunr 2 (TypeDoc's search) rebuilds a token set from the index in the browser; its minimisation names a node by
    // edge labels followed by node ids, so digit labels can merge two different nodes and invent words that are not
    // in the index. A prefix search reaching one throws (once: "GitHub" found nothing, through `github_3f1c…` in a
    // page). Loaded here as the browser loads it; reword the page words the assertion names.
    // TypeDoc's own lunr (a dependency of typedoc, without types).
    const lunr = createRequire(join(root, 'node_modules', 'typedoc', 'package.json'))('lunr') as { Index: { load: (index: object) => unknown } }
    const data = /searchData = "([^"]+)"/.exec(readFileSync(join(out, 'assets', 'search.js'), 'utf8'))
    t.ok(data, 'the search data')
    const { index } = JSON.parse(inflateSync(Buffer.from(data![1]!, 'base64')).toString()) as { index: object }
    const loaded = lunr.Index.load(index) as unknown as { tokenSet: { toArray: () => string[] }; invertedIndex: object }
    t.same(loaded.tokenSet.toArray().filter((word) => !Object.hasOwn(loaded.invertedIndex, word)), [], 'no invented word')
  })

  t.test('the documentation site, served, in Chromium', { timeout: BROWSER_TIMEOUT_MS }, async (t) => {
    const { server, base } = await serve(out)
    const browser: TestBrowser = await launch(import.meta.url)
    t.teardown(async () => { await browser.close(); server.close() })
    const { page } = browser
    await page.setViewportSize({ width: 1200, height: 900 })
    const pages = files(out).filter((f) => f.endsWith('.html'))
    const documents = pages.filter((f) => f.startsWith('documents/'))

    /** A screenshot of the window (not the whole page): always under .tap, in docs/screenshots when asked. */
    async function siteShot (name: string): Promise<void> {
      const file = join(browser.dir, `${name}.png`)
      await page.screenshot({ path: file })
      if (toDocs) {
        mkdirSync(join(root, 'docs', 'screenshots'), { recursive: true })
        copyFileSync(file, join(root, 'docs', 'screenshots', `${name}.png`))
      }
    }

    t.test('every page answers and every internal link of every page resolves, anchors included', async (t) => {
      t.ok(documents.length >= 30, `${documents.length} markdown pages, ${pages.length} pages in all`)
      const broken: string[] = []
      const idsOf = new Map<string, Set<string>>()
      for (const p of pages) {
        const res = await fetch(`${base}/${p}`)
        if (res.status !== 200) { broken.push(`${p}: ${res.status}`); continue }
        idsOf.set(p, ids(await res.text()))
      }
      for (const p of pages) {
        const html = readFileSync(join(out, p), 'utf8')
        for (const [, href] of html.matchAll(/\shref="([^"]+)"/g)) {
          if (/^[a-z]+:/i.test(href!) || href!.startsWith('//')) continue
          const [path, anchor] = href!.replace(/&amp;/g, '&').split('#') as [string, string | undefined]
          const target = path === '' ? p : normalize(join(dirname(p), decodeURIComponent(path))).split(sep).join('/')
          if (!existsSync(join(out, target))) { broken.push(`${p}: ${href} (no ${target})`); continue }
          if (anchor !== undefined && anchor !== '' && target.endsWith('.html') && !idsOf.get(target)?.has(decodeURIComponent(anchor))) {
            broken.push(`${p}: ${href} (no #${anchor})`)
          }
        }
      }
      t.same(broken, [], 'no broken page or link')
    })

    t.test('every markdown page opens in Chromium with its title and no script error; the navigation lists them', async (t) => {
      const errors: string[] = []
      page.on('pageerror', (err) => errors.push(err.message))
      // The search index and the navigation data are the same for every page: checked once, below and in the search test.
      await page.route(/assets\/(search|navigation)\.js$/, (route) => route.fulfill({ contentType: 'text/javascript', body: '' }))
      for (const p of ['index.html', ...documents]) {
        await page.goto(`${base}/${p}`, { waitUntil: 'domcontentloaded' })
        const title = await page.textContent('.tsd-typography h1, .tsd-page-title h1')
        if (title === null || title.trim() === '') errors.push(`${p}: no title`)
      }
      t.same(errors, [], `${documents.length + 1} pages`)
      await page.unrouteAll()
      await page.goto(`${base}/index.html`)
      await page.waitForSelector('.tsd-navigation a[href*="documents/"]', { state: 'attached' })
      const listed = await page.locator('.tsd-navigation a[href*="documents/"]').count()
      t.equal(listed, documents.length, 'the navigation links every markdown page')
    })

    /** The titles of the search results for `query`, typed into the search box as a reader would. */
    async function search (query: string): Promise<string[]> {
      await page.goto(`${base}/index.html`)
      await page.click('#tsd-search-trigger')
      await page.fill('#tsd-search-input', query)
      await page.waitForSelector('#tsd-search-results li a')
      return await page.locator('#tsd-search-results li a').allTextContents()
    }

    t.test('the search finds the GitHub provider page and the throttling guide', async (t) => {
      const github = await search('GitHub')
      t.ok(github.some((r) => /GitHub, Google/.test(r)), 'GitHub: the built-in OAuth2 providers page', { found: github })
      const rate = await search('rate limit')
      t.ok(rate.some((r) => /Throttling/.test(r)), 'rate limit: the throttling guide', { found: rate })
    })

    t.test('from the home page to a GitHub sign-in by following links', async (t) => {
      await page.goto(`${base}/index.html`)
      t.match(await page.textContent('.tsd-typography h1'), /fastify-gatehouse/)
      await page.waitForSelector('.tsd-navigation a[href*="documents/"]', { state: 'attached' })
      await siteShot('site-home')
      await page.click('.tsd-typography a:has-text("Built-in OAuth2 providers")')
      await page.waitForURL(/GitHub/)
      t.match(await page.textContent('.tsd-typography'), /Step by step: sign in with GitHub[\s\S]*github\.com\/settings\/developers[\s\S]*\/auth\/github\/callback[\s\S]*oauth2Provider/)
      t.ok(await page.isVisible('#step-by-step-sign-in-with-github'), 'the anchor the README links to')
      await siteShot('site-provider-github')
    })
  })
}
