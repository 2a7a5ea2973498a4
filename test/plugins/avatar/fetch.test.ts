import t from 'tap'
import { fetchPicture, type FetchLimits } from '../../../plugins/avatar/fetch.js'
import { compileIpMatcher } from '../../../lib/ip.js'
import { jpeg, startPictureServer } from '../../helpers/pictures.js'

const server = await startPictureServer()
t.teardown(() => server.close())
const { base } = server
const port = new URL(base).port

/**
 * Small limits, so that every refusal happens at once; the time limits are far away (a loaded machine must not
 * turn a refusal or a success into a timeout: issue 38), except in `short`, for the servers that never finish.
 */
const limits: FetchLimits = {
  maxBytes: 1024 * 1024, connectTimeoutMs: 60_000, timeoutMs: 120_000, maxRedirects: 3, allowPrivate: true, allowedHosts: undefined
}
/** A 400 ms limit for the answers that never complete: the limit is what ends them. */
const short: FetchLimits = { ...limits, timeoutMs: 400 }

t.test('a picture is fetched byte for byte', async (t) => {
  const bytes = await fetchPicture(`${base}/photo.jpg`, limits)
  t.same(bytes, await jpeg(400, 300))
})

t.test('a host name is resolved here and the connection pinned to the checked addresses', async (t) => {
  // localhost may resolve to ::1 first; the server listens on 127.0.0.1 only, so every checked address
  // must be offered to the connection, not just the first.
  t.ok((await fetchPicture(`http://localhost:${port}/small.png`, limits)).length > 0)
})

t.test('a non-200 answer is refused', async (t) => {
  await t.rejects(fetchPicture(`${base}/missing`, limits), /status 404/)
})

t.test('a body declaring 50 MiB is refused on its header', async (t) => {
  // The server sends the header and a few bytes, then nothing: only the declared length can name 52428800 bytes,
  // and with the time limit far away nothing else ends the fetch.
  await t.rejects(fetchPicture(`${base}/huge`, limits), /52428800 bytes exceeds the 1048576-byte limit/)
})

t.test('a 50 MiB body without a length is cut off at the limit', async (t) => {
  await t.rejects(fetchPicture(`${base}/endless`, limits), /exceeds the 1048576-byte limit/)
  t.ok(server.streamed() < 20 * 1024 * 1024, `the server wrote ${server.streamed()} bytes of 50 MiB before the connection was dropped`)
})

t.test('a server that never answers, or stops sending, times out at the total limit', async (t) => {
  for (const path of ['/hang', '/slow-body']) {
    const started = Date.now()
    await t.rejects(fetchPicture(`${base}${path}`, short), /no complete answer within 400 ms/, path)
    const took = Date.now() - started
    // A lower bound only (a loaded machine makes it later, never earlier): the total limit, not an earlier one.
    t.ok(took >= 350, `${path} gave up after ${took} ms, at the 400 ms limit`)
  }
})

t.test('a body trickling a byte at a time times out at the total limit', async (t) => {
  // A byte every 100 ms resets any idle timer: only the total limit ends this fetch, and its message says so.
  const started = Date.now()
  await t.rejects(fetchPicture(`${base}/trickle`, short), /no complete answer within 400 ms/)
  // A lower bound only (a loaded machine makes it later, never earlier).
  t.ok(Date.now() - started >= 350, 'at the 400 ms limit')
})

t.test('a gzip body inflating to 400 MiB is cut off at the limit, counted after inflation', async (t) => {
  const before = process.memoryUsage.rss()
  await t.rejects(fetchPicture(`${base}/gzip-bomb`, limits), /decompressed body exceeds the 1048576-byte limit/)
  t.ok(process.memoryUsage.rss() - before < 50 * 2 ** 20, 'memory stays bounded')
})

t.test('a fetch stopped by its caller ends at once', async (t) => {
  const stop = new AbortController()
  const fetching = fetchPicture(`${base}/hang`, limits, stop.signal)
  setImmediate(() => stop.abort())
  await t.rejects(fetching, /the call was stopped/)
})

t.test('a connection reset mid-body is a clean refusal, not a crash', async (t) => {
  await t.rejects(fetchPicture(`${base}/reset`, limits), /fetch failed/)
})

t.test('redirects are followed up to the limit; loops are refused', async (t) => {
  t.ok((await fetchPicture(`${base}/redirect-ok`, limits)).length > 0)
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
