/**
 * The load generator of a DPoP bench request (bench/lib.ts `load` runs it for a request with `dpop`): autocannon's
 * API with a fresh proof in each request (`setupRequest`), which its command line cannot do. Prints the result as
 * the command line's `--json` does. Argument: `{ url, connections, seconds | requests, timeout?, method, headers,
 * dpop }` as JSON.
 */
import autocannon from 'autocannon'
import { proofSigner, type DPoPLoad } from './dpop-proofs.js'

interface Spec { url: string; connections: number; seconds?: number; requests?: number; timeout?: number; method: 'GET' | 'POST'; headers: Record<string, string>; dpop: DPoPLoad }

const spec = JSON.parse(process.argv[2]!) as Spec
const next = proofSigner(spec.dpop, spec.method)
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  ...(spec.requests === undefined ? { duration: spec.seconds } : { amount: spec.requests }),
  ...(spec.timeout === undefined ? {} : { timeout: spec.timeout }),
  method: spec.method,
  headers: spec.headers,
  requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, dpop: next() } }) }]
})
process.stdout.write(JSON.stringify(result))
