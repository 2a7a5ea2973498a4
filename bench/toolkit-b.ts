/**
 * Toolkit benchmark, second half: a bare route against the same route with one of noCache, headers, rewrite
 * (plugin and constructor option), gzip, the basic-auth family and maybe/reject; and gzip against
 * @fastify/compress alone, which it is built on. Every server in a process of its own (bench/toolkit-apps.ts),
 * alternating rounds, medians (bench/server-process.ts).
 */
import type { BenchRequest } from './lib.js'
import { printProcessTable } from './process-table.js'
import { TOOLKIT_LENGTHS } from './toolkit-apps.js'

const basic = (user: string, passwd: string): Record<string, string> =>
  ({ authorization: `Basic ${Buffer.from(`${user}:${passwd}`).toString('base64')}` })

export async function benchToolkitB (): Promise<void> {
  const req: BenchRequest = { path: '/r', headers: { 'accept-encoding': 'gzip' } }
  const old: BenchRequest = { ...req, path: '/old/r' }
  await printProcessTable('toolkit, part B: one plugin on a bare GET route (small JSON)', { label: 'bare GET route', app: 'tk-bare-get', req }, [
    { label: 'noCache', app: 'tk-no-cache', req, target: 0.95 },
    { label: 'headers (3 entries)', app: 'tk-headers', req, target: 0.95 },
    // The floor of the two rows above: the route's own handler setting the same headers, no plugin.
    { label: 'handler sets noCache\'s headers itself (for scale)', app: 'tk-bare-get-no-cache-headers', req },
    { label: 'handler sets the 3 headers itself (for scale)', app: 'tk-bare-get-three-headers', req },
    { label: 'rewrite plugin (/old/r -> /r)', app: 'tk-rewrite', req: old, target: 0.9 },
    { label: 'rewrite plugin (no rule matches)', app: 'tk-rewrite', req, target: 0.9 },
    { label: 'rewriteUrl option (/old/r -> /r)', app: 'tk-rewrite-url', req: old, target: 0.9 },
    { label: 'gzip (body below threshold)', app: 'tk-gzip-small', req },
    { label: 'maybe (predicate false)', app: 'tk-maybe', req },
    { label: 'reject (predicate false)', app: 'tk-reject', req }
  ], TOOLKIT_LENGTHS)
  // The bare route receives the same Authorization header, so the rows differ only by the check.
  const authed: BenchRequest = { path: '/r', headers: basic('admin', 'bench-secret') }
  await printProcessTable('toolkit, part B: basic auth, bare route sent the same Authorization header', { label: 'bare GET route', app: 'tk-bare-get', req: authed }, [
    { label: 'basic auth withUserPasswd', app: 'tk-basic-fixed', req: authed, target: 0.9 },
    { label: 'basic auth withUserPasswd, scheme as "basic" (full parse)', app: 'tk-basic-fixed', req: { path: '/r', headers: { authorization: `basic${authed.headers!.authorization!.slice(5)}` } } },
    { label: 'basic auth withBcryptHash (cost 4)', app: 'tk-basic-bcrypt', req: authed }
  ], TOOLKIT_LENGTHS)
  await printProcessTable('toolkit, part B: gzip on a 16 KiB JSON answer, against @fastify/compress alone (level 6)', { label: '@fastify/compress alone (gzip, level 6)', app: 'tk-compress-large', req }, [
    { label: 'gzip (level 6, default)', app: 'tk-gzip-large', req, target: 0.95 }
  ], TOOLKIT_LENGTHS)
  await printProcessTable('toolkit, part B: gzip on a 16 KiB JSON answer, against @fastify/compress alone (level 1)', { label: '@fastify/compress alone (gzip, level 1)', app: 'tk-compress-large-1', req }, [
    { label: 'gzip (level 1)', app: 'tk-gzip-large-1', req, target: 0.95 },
    { label: 'bare route, uncompressed (for scale)', app: 'tk-bare-large', req }
  ], TOOLKIT_LENGTHS)
}
