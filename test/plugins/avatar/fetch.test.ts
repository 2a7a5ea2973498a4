import t from 'tap'
import { fetchPicture, type FetchLimits } from '../../../plugins/avatar/fetch.js'
import { compileIpMatcher } from '../../../lib/ip.js'
import { jpeg, startPictureServer } from '../../helpers/pictures.js'

const server = await startPictureServer()
t.teardown(() => server.close())
const { base } = server
const port = new URL(base).port

/** Small limits, so that every refusal happens within a fraction of a second. */
const limits: FetchLimits = {
  maxBytes: 1024 * 1024, connectTimeoutMs: 1000, timeoutMs: 400, maxRedirects: 3, allowPrivate: true, allowedHosts: undefined
}
/** The same for the fetches that must succeed: a loaded machine may take longer than 400 ms to answer (issue 38). */
const roomy: FetchLimits = { ...limits, timeoutMs: 10_000 }

t.test('a picture is fetched byte for byte', async (t) => {
  const bytes = await fetchPicture(`${base}/photo.jpg`, roomy)
  t.same(bytes, await jpeg(400, 300))
})

t.test('a host name is resolved here and the connection pinned to the checked addresses', async (t) => {
  // localhost may resolve to ::1 first; the server listens on 127.0.0.1 only, so every checked address
  // must be offered to the connection, not just the first.
  t.ok((await fetchPicture(`http://localhost:${port}/small.png`, roomy)).length > 0)
})

t.test('a non-200 answer is refused', async (t) => {
  await t.rejects(fetchPicture(`${base}/missing`, limits), /status 404/)
})

t.test('a body declaring 50 MiB is refused on its header', async (t) => {
  const started = Date.now()
  await t.rejects(fetchPicture(`${base}/huge`, limits), /52428800 bytes exceeds the 1048576-byte limit/)
  t.ok(Date.now() - started < 400)
})

t.test('a 50 MiB body without a length is cut off at the limit', async (t) => {
  await t.rejects(fetchPicture(`${base}/endless`, { ...limits, timeoutMs: 5000 }), /exceeds the 1048576-byte limit/)
  t.ok(server.streamed() < 20 * 1024 * 1024, `the server wrote ${server.streamed()} bytes of 50 MiB before the connection was dropped`)
})

t.test('a server that never answers, or stops sending, times out at the total limit', async (t) => {
  for (const path of ['/hang', '/slow-body']) {
    const started = Date.now()
    await t.rejects(fetchPicture(`${base}${path}`, limits), /no complete answer within 400 ms/, path)
    const took = Date.now() - started
    t.ok(took >= 350 && took < 1500, `${path} gave up after ${took} ms`)
  }
})

t.test('a body trickling a byte at a time times out at the total limit', async (t) => {
  const started = Date.now()
  await t.rejects(fetchPicture(`${base}/trickle`, limits), /no complete answer within 400 ms/)
  t.ok(Date.now() - started < 1500)
})

t.test('a gzip body inflating to 400 MiB is cut off at the limit, counted after inflation', async (t) => {
  const before = process.memoryUsage.rss()
  await t.rejects(fetchPicture(`${base}/gzip-bomb`, { ...limits, timeoutMs: 5000 }), /decompressed body exceeds the 1048576-byte limit/)
  t.ok(process.memoryUsage.rss() - before < 50 * 2 ** 20, 'memory stays bounded')
})

t.test('a fetch stopped by its caller ends at once', async (t) => {
  const stop = new AbortController()
  const fetching = fetchPicture(`${base}/hang`, { ...limits, timeoutMs: 10_000 }, stop.signal)
  setImmediate(() => stop.abort())
  await t.rejects(fetching, /the call was stopped/)
})

t.test('a connection reset mid-body is a clean refusal, not a crash', async (t) => {
  await t.rejects(fetchPicture(`${base}/reset`, limits), /fetch failed/)
})

t.test('redirects are followed up to the limit; loops are refused', async (t) => {
  t.ok((await fetchPicture(`${base}/redirect-ok`, roomy)).length > 0)
  await t.rejects(fetchPicture(`${base}/loop`, limits), /more than 3 redirects/)
  await t.rejects(fetchPicture(`${base}/redirect-ok`, { ...limits, maxRedirects: 0 }), /more than 0 redirects/)
})

t.test('a redirect target is checked like the first link', async (t) => {
  await t.rejects(fetchPicture(`${base}/redirect-file`, limits), /scheme file: refused/)
  // 127.0.0.1 is allowed here, the metadata address is not: the redirect to it is refused before connecting.
  const onlyLoopback = { ...limits, allowPrivate: compileIpMatcher(['127.0.0.1']) }
  t.ok((await fetchPicture(`${base}/small.png`, onlyLoopback)).length > 0)
  await t.rejects(fetchPicture(`${base}/redirect-metadata`, onlyLoopback), /169\.254\.169\.254 resolves to non-public address/)
  await t.rejects(fetchPicture(`${base}/redirect-metadata`, { ...limits, allowedHosts: ['127.0.0.1'] }), /host 169\.254\.169\.254 is not in allowedHosts/)
})

t.test('without allowPrivate, private, loopback and link-local targets are refused without contacting them', async (t) => {
  const strict = { ...limits, allowPrivate: false }
  const before = server.requests.length
  for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '0.0.0.0', '169.254.169.254', '10.0.0.1', '192.168.1.1', '[fe80::1]', '100.64.0.1', '127.1']) {
    await t.rejects(fetchPicture(`http://${host}:${port}/small.png`, strict), /resolves to non-public address/, host)
  }
  t.equal(server.requests.length, before, 'the picture server saw no request')
})

t.test('only http and https; no credentials; no garbage', async (t) => {
  for (const link of ['file:///etc/passwd', 'data:image/png;base64,iVBORw0KGgo=', 'ftp://127.0.0.1/x.png', 'javascript:alert(1)', 'gopher://127.0.0.1:70/']) {
    await t.rejects(fetchPicture(link, limits), /refused \(http and https only\)/, link)
  }
  await t.rejects(fetchPicture(`http://user:pw@127.0.0.1:${port}/small.png`, limits), /credentials/)
  await t.rejects(fetchPicture('not a url', limits), /not a valid URL/)
})

t.test('allowedHosts restricts hosts, with .suffix for subdomains', async (t) => {
  await t.rejects(fetchPicture(`${base}/small.png`, { ...limits, allowedHosts: ['pics.example.com'] }), /not in allowedHosts/)
  t.ok(await fetchPicture(`${base}/small.png`, { ...limits, allowedHosts: ['127.0.0.1'] }))
  await t.rejects(fetchPicture(`http://evil-example.com.:${port}/x`, { ...limits, allowedHosts: ['.example.com'] }), /not in allowedHosts/)
})
