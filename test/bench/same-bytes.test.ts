import t from 'tap'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { createServer, type AddressInfo } from 'node:net'
import { PADDING, headerBytes, padTo, sameBytes } from '../../bench/same-bytes.js'

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js')

const cookie = { path: '/r', headers: { cookie: 'JWT=aaaa.bbbb.cccc; XSRF-TOKEN=0123456789abcdefghijkl', 'x-xsrf-token': '0123456789abcdefghijkl' } }
const bearer = { path: '/r', headers: { authorization: 'Bearer aaaa.bbbb.cccc' } }

/** The bytes of the first request autocannon sends with `headers` to a loopback server, its Host line left out. */
async function firstRequest (headers: Record<string, string>): Promise<Buffer> {
  let first: Buffer | undefined
  const server = createServer((socket) => {
    socket.on('data', (d: Buffer) => {
      first ??= d
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const args = [AUTOCANNON, '--json', '-c', '1', '-a', '1', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]), `http://127.0.0.1:${port}/r`]
  await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'ignore' })
    child.on('error', reject)
    child.on('close', resolve)
  })
  await new Promise((resolve) => server.close(resolve))
  if (first === undefined) throw new Error('autocannon sent nothing')
  // The Host line names the port, which differs between two servers: compare without it.
  return Buffer.from(first.toString('latin1').replace(/^Host: .*\r\n/mi, ''), 'latin1')
}

t.test('padTo brings a request\'s headers to the byte count asked for, with one harmless header', async (t) => {
  const [a, b] = sameBytes(cookie, bearer)
  t.equal(headerBytes(a), headerBytes(b), 'same header bytes')
  t.same(a, cookie, 'the longer request is left as it is')
  t.same(Object.keys(b.headers!), ['authorization', PADDING], 'the shorter one gains the padding header only')
  t.equal(b.headers!.authorization, bearer.headers.authorization, 'its own headers unchanged')
  t.equal(headerBytes(padTo(bearer, headerBytes(bearer))), headerBytes(bearer), 'nothing to pad: unchanged')
  t.throws(() => padTo(bearer, headerBytes(bearer) + 3), /cannot pad/, 'a gap shorter than a padding line')
  t.throws(() => padTo(cookie, headerBytes(bearer)), /cannot pad/, 'a request already longer')
})

t.test('on the wire, autocannon sends the padded pair with the same number of bytes', async (t) => {
  const [a, b] = sameBytes(cookie, bearer)
  const [wireA, wireB] = [await firstRequest(a.headers!), await firstRequest(b.headers!)]
  t.equal(wireA.length, wireB.length, `${wireA.length} bytes each`)
  t.match(wireB.toString('latin1'), /\r\nauthorization: Bearer aaaa\.bbbb\.cccc\r\n/, 'the bearer header as given')
  t.not((await firstRequest(bearer.headers)).length, wireA.length, 'unpadded, the two differ')
})
