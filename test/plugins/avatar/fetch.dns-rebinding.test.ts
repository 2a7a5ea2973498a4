/**
 * DNS rebinding: the avatar fetcher resolves a host once, checks every address, and connects only to those. A
 * name is resolved here through a controlled resolver that answers differently the second time (as a rebinding
 * DNS server would): first the allowed address of the picture server, then the address of an "internal" server.
 * The picture must come from the checked address; the internal server must see no request. (A test with
 * `localhost` cannot tell: it resolves the same both times.)
 */
import t from 'tap'
import dns from 'node:dns'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { compileIpMatcher } from '../../../lib/ip.js'
import { png, startPictureServer } from '../../helpers/pictures.js'

const server = await startPictureServer()
t.teardown(() => server.close())
const port = Number(new URL(server.base).port)

// The internal server: same port, another loopback address, content an attacker wants.
let internalHits = 0
const internal = createServer((_req, res) => { internalHits++; res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('internal secret')) })
internal.listen(port, '127.0.0.2')
await once(internal, 'listening')
t.teardown(() => new Promise<void>((resolve) => internal.close(() => resolve())))

// A second lookup (Node's own, made when connecting) gets the rebinding answer.
const realLookup = dns.lookup
;(dns as { lookup: unknown }).lookup = ((host: string, opts: unknown, cb?: unknown) => {
  const callback = (typeof opts === 'function' ? opts : cb) as (...a: unknown[]) => void
  if (host !== 'rebind.test') return (realLookup as (...a: unknown[]) => void)(host, opts, cb)
  const all = typeof opts === 'object' && opts !== null && (opts as { all?: boolean }).all === true
  if (all) callback(null, [{ address: '127.0.0.2', family: 4 }])
  else callback(null, '127.0.0.2', 4)
})
t.teardown(() => { (dns as { lookup: unknown }).lookup = realLookup })

// The fetcher's own lookup gets the first, checked answer.
const firstLookups: string[] = []
const { fetchPicture } = await t.mockImport<typeof import('../../../plugins/avatar/fetch.js')>('../../../plugins/avatar/fetch.js', {
  'node:dns/promises': {
    lookup: async (host: string) => {
      firstLookups.push(host)
      return [{ address: '127.0.0.1', family: 4 }]
    }
  }
})

t.test('the connection goes to the checked address, never to a second answer', async (t) => {
  const bytes = await fetchPicture(`http://rebind.test:${port}/small.png`, {
    maxBytes: 1024 * 1024, connectTimeoutMs: 1000, timeoutMs: 2000, maxRedirects: 0, allowPrivate: compileIpMatcher(['127.0.0.1']), allowedHosts: undefined
  })
  t.same(firstLookups, ['rebind.test'], 'resolved once, by the fetcher')
  t.same(bytes, await png(50, 40), 'the bytes of the checked server')
  t.equal(internalHits, 0, 'the internal server saw nothing')
})
