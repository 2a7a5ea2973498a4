import t from 'tap'
import Fastify from 'fastify'
import * as http2 from 'node:http2'
import type { Readable } from 'node:stream'
import { brotliCompressSync, createGunzip, deflateSync, gzipSync } from 'node:zlib'
import compress from '@fastify/compress'
import { listen } from '../../helpers/client.js'
import { sizeLimitPlugin, sizeLimitHook } from '../../../plugins/toolkit/size-limit.js'
import { rawExchange } from '../../helpers/raw-socket.js'

/** Half-close only once the server answered everything it will; it closes on errors and 413s by itself. */
const raw = (port: number, data: string): Promise<string> => rawExchange(port, data, 3000)

function chunked (parts: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder()
  let i = 0
  return new ReadableStream({
    pull (ctrl) { if (i < parts.length) ctrl.enqueue(enc.encode(parts[i++])); else ctrl.close() }
  })
}

t.test('sizeLimit: 413 JSON whatever the client claims', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(sizeLimitPlugin, { limit: 100 })
      scope.post('/echo', async (req) => ({ len: (req.body as string).length }))
      scope.get('/get', async () => 'got')
    })
    app.post('/route', { preParsing: sizeLimitHook(10) }, async (req) => ({ len: (req.body as string).length }))
    app.post('/free', async (req) => ({ len: (req.body as string).length }))
  })
  t.teardown(() => app.close())
  const { port } = app.server.address() as { port: number }
  const post = (path: string, body: string | ReadableStream<Uint8Array>, extra: RequestInit = {}): Promise<Response> =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'text/plain' }, body, ...extra })

  const ok = await post('/echo', 'x'.repeat(100))
  t.same(await ok.json(), { len: 100 }, 'exactly the limit passes')

  const big = await post('/echo', 'x'.repeat(101))
  t.equal(big.status, 413)
  t.equal(big.headers.get('content-type'), 'application/json; charset=utf-8')
  t.same(await big.json(), { error: 'request body too large', details: 'limit is 100 bytes', code: 'GATEHOUSE_TOO_LARGE' })

  const chunkedBig = await post('/echo', chunked(['x'.repeat(40), 'x'.repeat(40), 'x'.repeat(40)]), { duplex: 'half' } as RequestInit)
  t.equal(chunkedBig.status, 413, 'chunked body without Content-Length counted')
  t.same(await chunkedBig.json(), { error: 'request body too large', details: 'limit is 100 bytes', code: 'GATEHOUSE_TOO_LARGE' })

  const chunkedOk = await post('/echo', chunked(['x'.repeat(40), 'x'.repeat(40)]), { duplex: 'half' } as RequestInit)
  t.same(await chunkedOk.json(), { len: 80 }, 'small chunked body passes intact')

  // Claims more than the limit: refused before any body byte is read.
  const claimed = await raw(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\nxx')
  t.match(claimed, /^HTTP\/1\.1 413 /, 'declared length above the limit')
  t.match(claimed, /connection: close/i)
  t.match(claimed, /"error":"request body too large"/)
  t.match(claimed, /"code":"GATEHOUSE_TOO_LARGE"/)

  // Claims less than it sends: only the claimed bytes are the body; the rest is a broken next request.
  const lying = await raw(port, `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n${'y'.repeat(300)}`)
  // Node's parser meets the surplus in the same packet and answers 400 for the connection (sometimes after
  // the first answer): either way the handler never sees more than the 5 declared bytes.
  t.match(lying, /^HTTP\/1\.1 (200|400) /)
  t.notMatch(lying, /"len":(?!5\})/, 'never more than the declared bytes')
  t.notMatch(lying, /HTTP\/1\.1 5\d\d/, 'no 5xx')

  // Chunked with a lying chunk size header is a framing error for Node's parser: 400, not 5xx.
  const badChunk = await raw(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n')
  t.match(badChunk, /^HTTP\/1\.1 400 /)

  // A body without Content-Length or Transfer-Encoding is no body in HTTP/1.1.
  const missing = await raw(port, `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${'z'.repeat(300)}`)
  t.notMatch(missing, /HTTP\/1\.1 5\d\d/, 'no 5xx without a length')

  const g = await fetch(`${base}/get`)
  t.equal(await g.text(), 'got', 'bodiless requests untouched')

  const route = await post('/route', 'x'.repeat(11))
  t.equal(route.status, 413, 'route-level preParsing hook')
  t.same(await route.json(), { error: 'request body too large', details: 'limit is 10 bytes', code: 'GATEHOUSE_TOO_LARGE' })
  t.same(await (await post('/route', 'x'.repeat(10))).json(), { len: 10 })
  t.same(await (await post('/free', 'x'.repeat(500))).json(), { len: 500 }, 'scoped to its context')
})

t.test('sizeLimit refuses bad limits', async (t) => {
  for (const limit of [0, -1, 1.5, '100', undefined]) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(sizeLimitPlugin, { limit } as never).ready() }, { code: 'GATEHOUSE_OPTION', option: 'sizeLimit.limit' }, `limit ${String(limit)}`)
    await bad.close()
    t.throws(() => sizeLimitHook(limit as never), { code: 'GATEHOUSE_OPTION', option: 'sizeLimit.limit' }, `hook limit ${String(limit)}`)
  }
})

const ZIPPERS: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, 'x-gzip': gzipSync, deflate: deflateSync, br: brotliCompressSync }

t.test('sizeLimit counts the bytes the handler sees: compressed bodies are held to the limit once inflated', async (t) => {
  const seen: number[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      // Request decompression of @fastify/compress: its hook is added to each route and runs after the context's.
      await scope.register(compress)
      await scope.register(sizeLimitPlugin, { limit: 1024 })
      scope.post('/echo', async (req) => { seen.push((req.body as string).length); return { len: (req.body as string).length } })
    })
    await app.register(async (scope) => {
      await scope.register(compress)
      scope.post('/route', { preParsing: sizeLimitHook(1024) }, async (req) => { seen.push((req.body as string).length); return { len: (req.body as string).length } })
    })
    await app.register(async (scope) => {
      // No decompressor at all: the compressed bytes are still checked by what they inflate to.
      await scope.register(sizeLimitPlugin, { limit: 1024 })
      scope.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => { done(null, body) })
      scope.post('/raw', async (req) => { seen.push((req.body as Buffer).length); return { len: (req.body as Buffer).length } })
    }, { prefix: '/plain' })
    await app.register(async (scope) => {
      // A decompressor of the host's own, as a context hook that runs before the limit: counted as it hands on.
      scope.addHook('preParsing', async (req, _reply, payload) => {
        if (req.headers['content-encoding'] !== 'gzip') return payload
        const inflated = payload.pipe(createGunzip()) as Readable & { receivedEncodedLength?: number }
        inflated.receivedEncodedLength = Number(req.headers['content-length'])
        return inflated
      })
      await scope.register(sizeLimitPlugin, { limit: 1024 })
      scope.post('/echo', async (req) => { seen.push((req.body as string).length); return { len: (req.body as string).length } })
    }, { prefix: '/own' })
  })
  t.teardown(() => app.close())
  const post = (path: string, body: Buffer, coding: string | undefined, type = 'text/plain'): Promise<Response> =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': type, ...(coding === undefined ? {} : { 'content-encoding': coding }) }, body })
  const bomb = Buffer.alloc(300 * 1024, 'a') // 300 KiB that gzip turns into a few hundred bytes
  const small = Buffer.alloc(1000, 'b')

  for (const [coding, zip] of Object.entries(ZIPPERS)) {
    t.ok(zip(bomb).length < 1024, `${coding}: the compressed bomb is under the limit on the wire`)
    const big = await post('/plain/raw', zip(bomb), coding, 'application/octet-stream')
    t.equal(big.status, 413, `${coding}: 300 KiB inflated refused without a decompressor`)
    t.same(await big.json(), { error: 'request body too large', details: 'limit is 1024 bytes', code: 'GATEHOUSE_TOO_LARGE' })
    const okRaw = await post('/plain/raw', zip(small), coding, 'application/octet-stream')
    t.same(await okRaw.json(), { len: zip(small).length }, `${coding}: without a decompressor the handler gets the bytes as sent`)
    if (coding === 'x-gzip') continue // @fastify/compress does not decode the alias
    for (const path of ['/echo', '/route']) {
      const big = await post(path, zip(bomb), coding)
      t.equal(big.status, 413, `${coding} ${path}: 300 KiB inflated refused`)
      t.same(await big.json(), { error: 'request body too large', details: 'limit is 1024 bytes', code: 'GATEHOUSE_TOO_LARGE' })
    }
    const ok = await post('/echo', zip(small), coding)
    t.same(await ok.json(), { len: 1000 }, `${coding}: a body within the limit once inflated reaches the handler inflated`)
    const okRoute = await post('/route', zip(small), coding)
    t.same(await okRoute.json(), { len: 1000 }, `${coding}: route-level hook behind the decompressor`)
  }
  t.same(seen.filter((n) => n > 1024), [], 'no handler ever saw more than the limit')

  // Chunked and compressed: neither framing nor coding gets around the count.
  const gz = gzipSync(bomb)
  const chunkedBomb = await fetch(`${base}/echo`, {
    method: 'POST', headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: chunked([gz.subarray(0, 100).toString('latin1')]), duplex: 'half'
  } as RequestInit)
  t.not(chunkedBomb.status, 200, 'a truncated compressed body never reaches the handler')
  t.ok(chunkedBomb.status < 500, 'and is no 5xx')

  const own = await post('/own/echo', gzipSync(small), 'gzip')
  t.same(await own.json(), { len: 1000 }, 'behind an earlier decoding hook the stream is counted as it comes, not inflated twice')
  const ownBig = await post('/own/echo', gz, 'gzip')
  t.equal(ownBig.status, 413, 'and the limit still holds there')

  for (const coding of ['compress', 'gzip, br', 'x-unknown']) {
    const r = await post('/echo', small, coding)
    t.equal(r.status, 415, `Content-Encoding ${coding}: the inflated size cannot be known`)
    const body = await r.json() as { error: string, code: string }
    t.equal(body.code, 'GATEHOUSE_UNSUPPORTED_ENCODING')
    t.equal(body.error, 'unsupported content encoding')
  }
  const identity = await post('/echo', small, 'identity')
  t.same(await identity.json(), { len: 1000 }, 'identity is no coding')
  const broken = await post('/plain/raw', Buffer.from('not gzip at all'), 'gzip', 'application/octet-stream')
  t.equal(broken.status, 400)
  t.same(await broken.json(), { error: 'invalid request body', details: 'the body does not decode with its Content-Encoding', code: 'GATEHOUSE_BAD_REQUEST' })
})

t.test('sizeLimit over HTTP/2: a body without a length is counted', async (t) => {
  const app = Fastify({ http2: true })
  await app.register(sizeLimitPlugin, { limit: 100 })
  app.post('/echo', async (req) => ({ len: (req.body as string).length }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const session = http2.connect(`http://127.0.0.1:${(app.server.address() as { port: number }).port}`)
  t.teardown(() => { session.close() })
  const send = (body: string, length?: number): Promise<{ status: number, body: string }> => new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ':method': 'POST', ':path': '/echo', 'content-type': 'text/plain' }
    if (length !== undefined) headers['content-length'] = length
    const req = session.request(headers)
    let status = 0
    let got = ''
    req.on('response', (h) => { status = Number(h[':status']) })
    req.setEncoding('utf8').on('data', (d: string) => { got += d })
    req.on('end', () => { resolve({ status, body: got }) })
    req.on('error', reject)
    req.end(body)
  })
  const big = await send('x'.repeat(500))
  t.equal(big.status, 413, 'no content-length, 500 bytes')
  t.same(JSON.parse(big.body), { error: 'request body too large', details: 'limit is 100 bytes', code: 'GATEHOUSE_TOO_LARGE' })
  t.same(JSON.parse((await send('x'.repeat(100))).body), { len: 100 }, 'within the limit without a length')
  t.same(JSON.parse((await send('x'.repeat(50), 50)).body), { len: 50 }, 'within the limit with a length')
  t.equal((await send('x'.repeat(101), 101)).status, 413, 'declared above the limit')
})
