import t from 'tap'
import Fastify from 'fastify'
import { request as httpRequest } from 'node:http'
import { listen } from '../helpers/client.js'
import { blackWordsPlugin, blackWordsHook, wordScanner } from '../../plugins/toolkit/black-words.js'

/** POSTs a chunked body, one write per part, waiting for each write to be flushed before the next. */
function postChunks (port: number, path: string, parts: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    const next = (i: number): void => {
      if (i === parts.length) { req.end(); return }
      req.write(parts[i], () => setImmediate(() => next(i + 1)))
    }
    next(0)
  })
}

const BLOCKED = { error: 'forbidden', details: 'request body contains a blocked word', code: 'GATEHOUSE_FORBIDDEN' }

t.test('blackWords: case-insensitive, across chunks, 403 JSON', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(blackWordsPlugin, { words: ['spam', 'Viagra', 'café'] })
      scope.post('/post', async (req) => ({ body: req.body }))
      scope.get('/get', async () => 'got')
    })
    app.post('/free', async (req) => ({ body: req.body }))
    app.post('/hooked', { preHandler: blackWordsHook(['secret']) }, async (req) => ({ body: req.body }))
  })
  t.teardown(() => app.close())
  const { port } = app.server.address() as { port: number }
  const post = (path: string, body: string, type = 'text/plain'): Promise<Response> =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': type }, body })

  const clean = await post('/post', 'a perfectly fine message')
  t.same(await clean.json(), { body: 'a perfectly fine message' }, 'clean body passes intact')

  for (const body of ['buy SPAM now', 'cheap vIaGrA', 'spam', 'x'.repeat(5000) + 'Spam', 'Un CAFÉ']) {
    const r = await post('/post', body)
    t.equal(r.status, 403, `refused: ${body.slice(-14)}`)
    t.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
    t.same(await r.json(), BLOCKED)
  }
  const json = await post('/post', JSON.stringify({ msg: 'VIAGRA deals' }), 'application/json')
  t.equal(json.status, 403, 'JSON body')
  t.same(await json.json(), BLOCKED)

  const split = await postChunks(port, '/post', [Buffer.from('this is sp'), Buffer.from('AM, split')])
  t.equal(split.status, 403, 'word split across chunks')
  t.same(JSON.parse(split.body), BLOCKED)
  const cafe = Buffer.from('un café')
  const splitChar = await postChunks(port, '/post', [cafe.subarray(0, cafe.length - 1), cafe.subarray(cafe.length - 1)])
  t.equal(splitChar.status, 403, 'multi-byte character split across chunks')
  const okChunks = await postChunks(port, '/post', [Buffer.from('sp'), Buffer.from('ace am')])
  t.same(JSON.parse(okChunks.body), { body: 'space am' }, 'parts that only look close do not match')

  t.equal(await (await fetch(`${base}/get`)).text(), 'got', 'bodiless requests untouched')
  t.same(await (await post('/free', 'spam')).json(), { body: 'spam' }, 'scoped to its context')

  const hooked = await post('/hooked', JSON.stringify({ a: 'my SECRET' }), 'application/json')
  t.equal(hooked.status, 403, 'hook form on the parsed body')
  t.same(await hooked.json(), BLOCKED)
  t.same(await (await post('/hooked', 'open')).json(), { body: 'open' })
})

t.test('blackWords: a body over its limit is 413 before any word is looked for', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(blackWordsPlugin, { words: ['spam'], limit: 20 })
    app.post('/post', async (req) => ({ body: req.body }))
  })
  t.teardown(() => app.close())
  const post = (body: string): Promise<Response> => fetch(`${base}/post`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body })
  const big = await post('x'.repeat(21))
  t.equal(big.status, 413)
  t.same(await big.json(), { error: 'request body too large', details: 'limit is 20 bytes', code: 'GATEHOUSE_TOO_LARGE' })
  t.same(await (await post('x'.repeat(20))).json(), { body: 'x'.repeat(20) }, 'exactly the limit passes')
})

t.test('wordScanner keeps the tail of the previous chunk', async (t) => {
  const seen = wordScanner(['needle'])
  t.notOk(seen(Buffer.from('hay ne')))
  t.notOk(seen(Buffer.from('e')))
  t.ok(seen(Buffer.from('DLE hay')))
  const single = wordScanner(['x'])
  t.notOk(single(Buffer.from('abc')))
  t.ok(single(Buffer.from('aXc')))
})

t.test('blackWords refuses bad options', async (t) => {
  for (const [opts, option] of [
    [{}, 'blackWords.words'], [{ words: [] }, 'blackWords.words'], [{ words: ['ok', ' '] }, 'blackWords.words'],
    [{ words: ['a'], limit: 0 }, 'blackWords.limit'], [{ words: ['a'], limit: 1.5 }, 'blackWords.limit']
  ] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(blackWordsPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await bad.close()
  }
  t.throws(() => blackWordsHook([]), { code: 'GATEHOUSE_OPTION', option: 'blackWords.words' })
})
