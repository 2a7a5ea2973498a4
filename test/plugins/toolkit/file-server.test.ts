import t from 'tap'
import Fastify from 'fastify'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'node:http'
import { listen } from '../../helpers/client.js'
import { fileServerPlugin } from '../../../plugins/toolkit/file-server.js'

/** Raw request: fetch would resolve `..` and percent-escapes before sending. */
function rawGet (base: string, path: string): Promise<{ status: number; body: string; type: string | undefined }> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: 'GET' }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('fileServer', async (t) => {
  const dir = t.testdir({
    public: {
      'index.html': '<h1>home</h1>',
      'app.js': 'console.log(1)',
      sub: { 'a.txt': 'file a' },
      '.env': 'SECRET=dotfile',
      '.git': { config: 'SECRET=gitconfig' }
    },
    other: { 'index.html': 'other home' },
    'secret.txt': 'SECRET=outside'
  })
  mkdirSync(join(dir, 'public', 'empty'))
  writeFileSync(join(dir, 'public', 'sub', 'b.txt'), 'file b')
  const { app, base } = await listen(async (app) => {
    await app.register(fileServerPlugin, { root: join(dir, 'public'), prefix: '/static' })
    await app.register(fileServerPlugin, { root: join(dir, 'other'), prefix: '/other', maxAge: 60_000 })
    app.get('/api', async () => ({ ok: true }))
  })
  t.teardown(() => app.close())

  let r = await rawGet(base, '/static/')
  t.equal(r.status, 200)
  t.equal(r.body, '<h1>home</h1>', 'index file for the root')
  t.match(r.type, /text\/html/)
  r = await rawGet(base, '/static/app.js')
  t.equal(r.body, 'console.log(1)')
  t.match(r.type, /javascript/)
  r = await rawGet(base, '/static/sub/a.txt')
  t.equal(r.body, 'file a')
  r = await rawGet(base, '/other/')
  t.equal(r.body, 'other home', 'second file server beside the first')
  t.equal((await fetch(`${base}/other/`)).headers.get('cache-control'), 'public, max-age=60')
  t.same(await (await fetch(`${base}/api`)).json(), { ok: true })

  for (const path of ['/static/sub/', '/static/sub', '/static/empty/', '/static/missing.txt']) {
    r = await rawGet(base, path)
    t.equal(r.status, 404, `no listing / missing: ${path}`)
    t.notMatch(r.body, /a\.txt|b\.txt/)
  }
  for (const path of ['/static/.env', '/static/.git/config', '/static/%2eenv', '/static/%2Eenv']) {
    r = await rawGet(base, path)
    t.equal(r.status, 404, `dotfile hidden: ${path}`)
    t.notMatch(r.body, /SECRET/)
  }
  for (const path of ['/static/../secret.txt', '/static/%2e%2e/secret.txt', '/static/..%2fsecret.txt', '/static/sub/..%2f..%2fsecret.txt',
    '/static/%2e%2e%2fsecret.txt', '/static/....//secret.txt', '/static/sub/%2e%2e/%2e%2e/secret.txt', '/static/..%5csecret.txt',
    '/static/%252e%252e/secret.txt', '/static/sub/../.env', '/static/sub/a.txt%00.html', '/static//etc/passwd', '/other/../static/.env']) {
    r = await rawGet(base, path)
    t.ok(r.status >= 400 && r.status < 500, `traversal refused with 4xx: ${path} (${r.status})`)
    t.notMatch(r.body, /SECRET|root:/)
  }
})

t.test('bad options fail at startup', async (t) => {
  const dir = t.testdir({ 'file.txt': 'x', d: {} })
  const bad: Array<[object, string]> = [
    [{}, 'fileServer.root'],
    [{ root: join(dir, 'nope') }, 'fileServer.root'],
    [{ root: join(dir, 'file.txt') }, 'fileServer.root'],
    [{ root: join(dir, 'd'), index: '../x.html' }, 'fileServer.index'],
    [{ root: join(dir, 'd'), index: '' }, 'fileServer.index']
  ]
  for (const [opts, option] of bad) {
    const app = Fastify()
    app.register(fileServerPlugin, opts as never)
    await t.rejects(async () => { await app.ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await app.close()
  }
})
