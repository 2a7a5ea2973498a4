/**
 * The package as a user gets it: a copy of the sources without `dist` (a fresh clone) is packed with
 * `npm pack` (its `prepack` builds), the tarball is installed into an empty folder next to `fastify` only,
 * and three small apps run there with this Node: an ES module and a CommonJS one (`require`), each signing in
 * and calling a protected route over HTTP, and the README tutorial without its secret, which must stop at
 * startup naming the `secret` option.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

// Packing builds the whole project and installing fetches the dependencies (from npm's cache when warm).
t.setTimeout(600_000)

const root = fileURLToPath(new URL('../..', import.meta.url))
// What a fresh clone does not have, or what packing must not see.
const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', '.git', '.tap', 'coverage', 'tmp', 'var', 'docs'])

interface Run { code: number | null; stdout: string; stderr: string }

/** Runs a command with this Node first on PATH and without the test runner's loaders and npm's script variables. */
async function run (cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !k.startsWith('TAP') && !k.startsWith('npm_package_') && !k.startsWith('npm_lifecycle_') && !['NODE_OPTIONS', 'INIT_CWD', 'AUTH_SECRET'].includes(k)))
  const nodeDir = process.execPath.slice(0, process.execPath.lastIndexOf(sep))
  const child = spawn(cmd, args, { cwd, env: { ...base, PATH: `${nodeDir}:${process.env.PATH ?? ''}`, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  clearTimeout(timer)
  return { code, stdout, stderr }
}

const work = mkdtempSync(join(tmpdir(), 'gatehouse-scratch-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))

const SECRET = 'scratch-app-secret-0123456789abcdef-0123'

// Signs in with the direct provider, then calls the protected route with the XSRF header, as a browser app does.
const CLIENT = `
async function signInAndCall (base) {
  const login = await fetch(base + '/auth/local/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', passwd: 'alice-pw' }) })
  const cookies = login.headers.getSetCookie().map((c) => c.split(';')[0])
  const xsrf = cookies.find((c) => c.startsWith('XSRF-TOKEN=')).slice('XSRF-TOKEN='.length)
  const denied = await fetch(base + '/api/me')
  const me = await fetch(base + '/api/me', { headers: { cookie: cookies.join('; '), 'x-xsrf-token': xsrf } })
  return { login: login.status, denied: denied.status, status: me.status, body: await me.json() }
}
`
const SETUP = `
  await app.register(authPlugin, { secret: () => process.env.AUTH_SECRET, url: 'http://127.0.0.1' })
  await app.register(directProvider, { name: 'local', checker: async (user, passwd) => user === 'alice' && passwd === 'alice-pw' })
  app.get('/api/me', { preHandler: app.auth.authenticate }, async (request) => request.user)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const result = await signInAndCall('http://127.0.0.1:' + app.server.address().port)
  await app.close()
  console.log(JSON.stringify(result))
`
const APPS: Record<string, string> = {
  'esm-app.mjs': `import Fastify from 'fastify'
import authPlugin, { directProvider } from 'fastify-gatehouse'
import { pingPlugin } from 'fastify-gatehouse/toolkit'
${CLIENT}
const app = Fastify()
await app.register(pingPlugin)
${SETUP}`,
  'cjs-app.cjs': `const Fastify = require('fastify')
const { authPlugin, directProvider } = require('fastify-gatehouse')
const { pingPlugin } = require('fastify-gatehouse/toolkit')
${CLIENT}
async function main () {
  const app = Fastify()
  await app.register(pingPlugin)
${SETUP}}
main().catch((err) => { console.error(err); process.exit(1) })`,
  // The README tutorial as written, started without AUTH_SECRET.
  'tutorial.mjs': `import Fastify from 'fastify'
import authPlugin, { directProvider } from 'fastify-gatehouse'
const app = Fastify()
await app.register(authPlugin, { secret: (aud) => process.env.AUTH_SECRET, url: 'https://example.com' })
await app.register(directProvider, { name: 'local', checker: async (user, passwd) => user === 'alice' && passwd === 'alice-pw' })
await app.listen({ port: 0, host: '127.0.0.1' })
console.log('listening')
await app.close()`
}

let tarball = ''
const scratch = join(work, 'app')

t.test('npm pack of a fresh clone builds and ships dist, types, LICENSE and no sources', async (t) => {
  const clone = join(work, 'clone')
  cpSync(root, clone, { recursive: true, filter: (from) => !NOT_IN_A_CLONE.has(relative(root, from).split(sep)[0]!) })
  // The dev tools `prepack` needs (tsc), as after `npm ci` in the clone.
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir')
  const packDir = join(work, 'pack')
  mkdirSync(packDir)
  const packed = await run('npm', ['pack', '--pack-destination', packDir], clone)
  t.equal(packed.code, 0, 'npm pack succeeds', { stderr: packed.stderr.slice(-3000) })
  const file = readdirSync(packDir).find((f) => f.endsWith('.tgz'))
  t.ok(file, 'a tarball')
  tarball = join(packDir, file!)
  const list = await run('tar', ['-tzf', tarball], work)
  const files = list.stdout.split('\n').filter((f) => f !== '').map((f) => f.replace(/^package\//, ''))
  for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/index.js', 'dist/index.d.ts', 'dist/toolkit.js', 'dist/providers/index.js', 'dist/stores/index.js', 'dist/servers/index.js', 'dist/plugins/toolkit/hash-cli.js']) {
    t.ok(files.includes(f), `ships ${f}`)
  }
  t.same(files.filter((f) => /^(dist\/)?(example|bench|test)\//.test(f)), [], 'no demo, benchmarks or tests')
  t.same(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), [], 'no TypeScript sources')
})

t.test('the tarball installs into an empty app next to fastify alone', async (t) => {
  t.ok(tarball !== '', 'packed')
  mkdirSync(scratch)
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch-app', version: '1.0.0', private: true }))
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, 'fastify@5'], scratch)
  t.equal(installed.code, 0, 'npm install succeeds', { stderr: installed.stderr.slice(-3000) })
  const pkg = JSON.parse(readFileSync(join(scratch, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  t.same(Object.keys(pkg.dependencies).sort(), ['fastify', 'fastify-gatehouse'], 'fastify and the package, nothing else')
  for (const [name, text] of Object.entries(APPS)) writeFileSync(join(scratch, name), text)
})

for (const [kind, file] of [['an ES module app (import)', 'esm-app.mjs'], ['a CommonJS app (require)', 'cjs-app.cjs']] as const) {
  t.test(`${kind} signs in and calls a protected route`, async (t) => {
    const res = await run(process.execPath, [file], scratch, { AUTH_SECRET: SECRET }, 60_000)
    t.equal(res.code, 0, 'exits 0', { stderr: res.stderr.slice(-3000) })
    const out = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>
    t.match(out, { login: 200, denied: 401, status: 200, body: { name: 'alice', id: /^local_[0-9a-f]+$/ } }, 'signed in; the protected route answers 401 before and the user after')
  })
}

t.test('the tutorial without AUTH_SECRET stops at startup, naming the secret option', async (t) => {
  const res = await run(process.execPath, ['tutorial.mjs'], scratch, {}, 60_000)
  t.not(res.code, 0, 'exits with an error')
  t.notMatch(res.stdout, /listening/, 'never listened')
  t.match(res.stderr, /OptionsError: fastify-gatehouse: option "secret" returned no secret for the default audience/)
  t.match(res.stderr, /code: 'GATEHOUSE_OPTION'/)
  t.match(res.stderr, /option: 'secret'/)
})
