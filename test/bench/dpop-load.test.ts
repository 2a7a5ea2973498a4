/**
 * The DPoP bench's load (bench/dpop-load.ts through bench/lib.ts `load`): autocannon sends a new proof in every
 * request, each the same length (so a run's requests carry the same bytes), each one the package's verifier takes
 * for the bench's URL and token.
 */
import t from 'tap'
import { createServer, type AddressInfo } from 'node:http'
import { load } from '../../bench/lib.js'
import { benchKey, proofSigner } from '../../bench/dpop-proofs.js'
import { verifyProof } from '../../plugins/core/base/dpop-proof.js'

t.test('a fresh proof per request, all of one length, each verifying with the bench key', async (t) => {
  const seen: string[] = []
  const server = createServer((req, res) => { seen.push(String(req.headers.dpop)); res.end('ok') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => { resolve() })))
  const { key, jwk, jkt } = benchKey()
  const dpop = { key, jwk, htu: 'http://127.0.0.1/r', token: 'aaaa.bbbb.cccc' }
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/r`
  const result = await load(url, { path: '/r', headers: { authorization: 'DPoP aaaa.bbbb.cccc' }, dpop }, 2, { requests: 20 })
  t.equal(result.non2xx + result.errors, 0)
  t.equal(seen.length, 20)
  t.equal(new Set(seen).size, 20, 'every request has a proof of its own')
  t.equal(new Set(seen.map((p) => p.length)).size, 1, 'all of one length')
  t.equal(seen[0]!.length, proofSigner(dpop)().length, 'the length the bench pads the Bearer request to')
  const proof = verifyProof(seen[19]!, new Set(['ES256']))
  t.match(proof, { jkt, htm: 'GET', htu: 'http://127.0.0.1/r' })
  t.equal(new Set(seen.map((p) => verifyProof(p, new Set(['ES256'])).jti)).size, 20, 'each with a jti of its own')
})
