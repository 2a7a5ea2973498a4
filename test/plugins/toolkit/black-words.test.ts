import t from 'tap'
import Fastify from 'fastify'
import { request as httpRequest } from 'node:http'
import { gzipSync } from 'node:zlib'
import compress from '@fastify/compress'
import { listen } from '../../helpers/client.js'
import { blackWordsPlugin, blackWordsHook, containsBlackWord } from '../../../plugins/toolkit/black-words.js'
import { WordMatcher } from '../../../plugins/toolkit/word-matcher.js'

/** POSTs a chunked body, one write per part, waiting for each write to be flushed before the next. */
function postChunks (port: number, path: string, parts: Buffer[], type = 'text/plain'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': type, 'transfer-encoding': 'chunked' } }, (res) => {
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

t.test('containsBlackWord on parsed bodies', async (t) => {
  t.ok(containsBlackWord({ note: 'buy VIAGRA' }, ['Viagra']), 'object as JSON, words in any case')
  t.ok(containsBlackWord(Buffer.from('un CAFÉ'), ['café']))
  t.notOk(containsBlackWord('clean', ['spam']))
  t.notOk(containsBlackWord(undefined, ['spam']))
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.notOk(containsBlackWord(cyclic, ['self']), 'a body JSON cannot show is no match, not a crash')
})

t.test('the scanner carries a word across chunks', async (t) => {
  const seen = new WordMatcher(['needle']).scanner()
  t.notOk(seen(Buffer.from('hay ne')))
  t.notOk(seen(Buffer.from('e')))
  t.ok(seen(Buffer.from('DLE hay')))
  const single = new WordMatcher(['x']).scanner()
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

/** The rule the matcher must agree with: lower-case the whole text, look for each word. */
function naive (words: string[], text: string): boolean {
  const lower = text.toLowerCase()
  return words.some((w) => lower.includes(w.toLowerCase()))
}

t.test('the one-pass matcher agrees with a word-by-word search on random text, words and chunking', async (t) => {
  // A small alphabet makes overlaps (prefixes that are suffixes of other words) frequent.
  const alphabet = ['a', 'b', 'A', 'é', 'É', '😀', ' ']
  let seed = 42
  const rnd = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const str = (len: number): string => Array.from({ length: len }, () => alphabet[rnd(alphabet.length)]).join('')
  let agreed = 0
  let matched = 0
  for (let round = 0; round < 3000; round++) {
    const words = Array.from({ length: 1 + rnd(5) }, () => str(1 + rnd(5)))
    // Infixes of other words: a word that ends inside a longer one must still be found there.
    for (const w of [...words]) if (w.length > 2 && rnd(2) === 0) words.push(w.slice(1, 1 + rnd(w.length - 1) + 1))
    if (words.some((w) => w.trim() === '')) continue
    const text = str(rnd(40))
    const bytes = Buffer.from(text)
    const scan = new WordMatcher(words).scanner()
    let found = false
    for (let at = 0; at < bytes.length;) {
      const end = Math.min(bytes.length, at + 1 + rnd(6)) // cuts anywhere, inside characters too
      found = scan(bytes.subarray(at, end)) || found
      at = end
    }
    const expected = naive(words, text)
    if (found !== expected) t.fail(`words ${JSON.stringify(words)} text ${JSON.stringify(text)}: ${found} vs ${expected}`)
    else agreed++
    if (expected) matched++
    if (new WordMatcher(words).test(text) !== expected) t.fail(`whole text ${JSON.stringify(text)}, words ${JSON.stringify(words)}`) // the parsed-body form
  }
  t.ok(matched > 100 && agreed - matched > 100, `both outcomes covered (${matched} matches of ${agreed})`)
})

t.test('blackWords: many words, overlapping words, compressed bodies', async (t) => {
  const many = Array.from({ length: 500 }, (_, i) => `word${i}x`)
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(blackWordsPlugin, { words: [...many, 'hers', 'she', 'his'] })
      scope.post('/post', async (req) => ({ body: req.body }))
    })
    await app.register(async (scope) => {
      await scope.register(compress) // request decompression: the handler gets inflated bodies
      await scope.register(blackWordsPlugin, { words: ['spam'] })
      scope.post('/inflated', async (req) => ({ body: req.body }))
    })
  })
  t.teardown(() => app.close())
  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body })
  t.equal((await post('/post', 'text with WORD499X inside')).status, 403, 'the last of 500 words')
  t.equal((await post('/post', 'text with word0x inside')).status, 403, 'the first of 500 words')
  t.same(await (await post('/post', 'word49 word4999 wordx5')).json(), { body: 'word49 word4999 wordx5' }, 'near misses pass')
  t.equal((await post('/post', 'ushe')).status, 403, 'a word inside another word')
  t.equal((await post('/post', 'shis')).status, 403, 'a match found through a failed longer one (sh-e fails, h-i-s matches)')
  t.same(await (await post('/post', 'her hi sh')).json(), { body: 'her hi sh' })

  const spam = gzipSync(Buffer.from('x'.repeat(5000) + 'SPAM' + 'y'.repeat(5000)))
  const r = await post('/inflated', spam, { 'content-encoding': 'gzip' })
  t.equal(r.status, 403, 'a word inside a gzip body is found before the handler gets it inflated')
  t.same(await r.json(), BLOCKED)
  const clean = await post('/inflated', gzipSync(Buffer.from('all clean')), { 'content-encoding': 'gzip' })
  t.same(await clean.json(), { body: 'all clean' })
})

t.test('blackWords: bodies Fastify parses are scanned as parsed, every other body as it arrives', async (t) => {
  let handled = 0
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register((await import('@fastify/formbody')).default)
      await scope.register(blackWordsPlugin, { words: ['casino'] })
      // Hooks added after the plugin, and the route's own, run only on a checked body.
      scope.addHook('preValidation', async () => { handled++ })
      scope.post('/post', { preValidation: async () => { handled++ }, preHandler: async () => { handled++ } }, async (req) => { handled++; return { body: req.body } })
    })
    await app.register(async (scope) => {
      await scope.register(blackWordsPlugin, { words: ['casino'] })
      // Any type, handed on as the raw stream: only the preParsing scan can see such a body.
      scope.addContentTypeParser('*', (_req, payload, done) => { done(null, payload) })
      scope.post('/raw', async (req) => {
        let text = ''
        for await (const chunk of req.body as AsyncIterable<Buffer>) text += chunk.toString()
        return { text }
      })
    })
    await app.register(async (scope) => {
      await scope.register(blackWordsPlugin, { words: ['casino'] })
      // A text parser that hands on a stream: nothing parsed to scan, so the body is refused, not let through.
      scope.removeContentTypeParser('text/plain')
      scope.addContentTypeParser('text/plain', (_req, payload, done) => { done(null, payload) })
      scope.post('/streamed', async () => { handled++; return 'read' })
    })
    await app.register(async (scope) => {
      await scope.register(blackWordsPlugin, { words: ['casino'] })
      // A JSON parser that keeps the bytes: the Buffer is what is scanned.
      scope.removeContentTypeParser('application/json')
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => { done(null, body) })
      scope.post('/buffered', async (req) => { handled++; return { len: (req.body as Buffer).length } })
    })
  })
  t.teardown(() => app.close())
  const { port } = app.server.address() as { port: number }
  const post = (path: string, body: string | Buffer, type: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': type, ...headers }, body })

  for (const [body, type, what] of [
    [JSON.stringify({ deep: { list: ['a', 'my CASINO'] } }), 'application/json', 'a JSON body'],
    [JSON.stringify({ a: '\\u0063asino' }).replace('\\\\', '\\'), 'application/json; charset=utf-8', 'a JSON body hiding the word in a \\u escape (parsed, so decoded)'],
    ['a=1&note=big+Casino', 'application/x-www-form-urlencoded', 'a form body'],
    ['note=c%61sino', 'application/x-www-form-urlencoded', 'a form body hiding the word in a percent-escape (parsed, so decoded)'],
    ['a CASINO', 'text/plain', 'a text body'],
    ['a CASINO', 'application/x-unknown', 'a type this scope has no parser for']
  ] as const) {
    const r = await post('/post', body, type)
    t.equal(r.status, 403, what)
    t.same(await r.json(), BLOCKED)
  }
  t.equal(handled, 0, 'no handler ran on a refused body')
  t.same(await (await post('/post', JSON.stringify({ a: 'clean' }), 'application/json')).json(), { body: { a: 'clean' } })
  t.same(await (await post('/post', 'a=clean', 'application/x-www-form-urlencoded')).json(), { body: { a: 'clean' } })
  t.equal((await post('/post', 'clean', 'application/x-unknown')).status, 415, 'a clean body of an unknown type reaches Fastify, which refuses the type')
  handled = 0

  const gz = await post('/post', gzipSync(JSON.stringify({ a: 'casino' })), 'application/json', { 'content-encoding': 'gzip' })
  t.equal(gz.status, 403, 'a compressed JSON body is scanned inflated as it arrives')
  t.same(await gz.json(), BLOCKED)
  const chunked = await postChunks(port, '/post', [Buffer.from('{"a":"cas'), Buffer.from('ino"}')], 'application/json')
  t.equal(chunked.status, 403, 'a chunked JSON body, the word split across chunks')
  t.same(JSON.parse(chunked.body), BLOCKED)
  t.equal(handled, 0)

  const raw = await post('/raw', 'x casino y', 'application/octet-stream')
  t.equal(raw.status, 403, 'a body Fastify does not parse (handed on as a stream) is scanned as it arrives')
  t.same(await (await post('/raw', 'clean bytes', 'application/octet-stream')).json(), { text: 'clean bytes' }, 'and replayed whole when clean')

  const streamed = await post('/streamed', 'clean text', 'text/plain')
  t.equal(streamed.status, 403, 'a parser that hands on a stream for a scanned type: refused, since nothing can be checked')
  t.same(await streamed.json(), { ...BLOCKED, details: 'the request body was parsed into a stream, which cannot be checked for blocked words' })
  t.equal(handled, 0)

  const buffered = await post('/buffered', JSON.stringify({ a: 'un CASINO é' }), 'application/json')
  t.equal(buffered.status, 403, 'a body parsed into a Buffer is scanned as its bytes')
  t.same(await buffered.json(), BLOCKED)
  t.same(await (await post('/buffered', '{"a":"clean é"}', 'application/json')).json(), { len: 16 })
})
