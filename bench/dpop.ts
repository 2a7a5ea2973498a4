/**
 * `npm run bench -- dpop`: what DPoP (RFC 9449) costs a protected request (issue 48). One server app (`authenticate`
 * as the route's onRequest hook, a registered client `bench-cli`: bench/ladder-apps.ts), two requests of the same
 * bytes: the client's access token as `Authorization: Bearer` (padded with a harmless header), and a DPoP-bound
 * token of that client as `Authorization: DPoP` with a fresh proof in every request (ES256, signed by the load
 * generator: bench/dpop-load.ts). Both tokens are served from the verified-session cache; the DPoP request adds its
 * branch: the proof's signature verified (node:crypto's synchronous `verify`, on the main thread), its claims, the
 * token's hash, and its `jti` written to the state store (in memory here). A fresh server process per case per
 * round, rounds alternating (default BENCH_ROUNDS 5, 1 s of warm-up then 3 s of load), CPU µs per request first.
 * `npm run bench -- dpop:ir` counts instructions per request under callgrind instead, the main thread's and the
 * other threads' (libuv's thread pool: nothing of DPoP's since the verification left WebCrypto) apart.
 */
import { clientSessions } from './ladder-apps.js'
import { proofSigner } from './dpop-proofs.js'
import { printProcessTable } from './process-table.js'
import { headerBytes, padTo } from './same-bytes.js'
import { lengths } from './server-process.js'

export async function benchDPoP (): Promise<void> {
  const { bearer, dpop } = await clientSessions()
  // The DPoP request's bytes with one of its proofs (each has the same length), the Bearer request padded to them.
  const bytes = headerBytes({ path: dpop.path, headers: { ...dpop.headers, dpop: proofSigner(dpop.dpop!, 'GET')() } })
  const padded = padTo(bearer, bytes)
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  await printProcessTable(`DPoP against Bearer: one route with authenticate as onRequest, a registered client's token, ${bytes} header bytes each`,
    { label: 'authenticate, client token as Bearer (padded)', app: 'ladder-auth-client', req: padded },
    [{ label: 'authenticate, bound token as DPoP + a fresh proof', app: 'ladder-auth-client', req: dpop }],
    lengths({ warmup: 1, seconds: 3 }), rounds)
}
