/**
 * Toolkit benchmark, part C: the middleware of go-pkgz/rest v1.21-v1.24 (cors, secureHeaders,
 * crossOriginProtection, timeout, cacheControl, cleanPath, stripSlashes), each against a bare route, every server
 * in a process of its own (bench/toolkit-apps.ts), alternating rounds, medians (bench/server-process.ts).
 * `npm run bench -- toolkit` runs it after parts A and B; `npm run bench -- toolkit-c` alone.
 */
import type { BenchRequest } from './lib.js'
import { printProcessTable } from './process-table.js'
import { cacheEtag } from '../toolkit.js'
import { TOOLKIT_LENGTHS } from './toolkit-apps.js'

const LOREM: BenchRequest = { path: '/r', method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'lorem ipsum '.repeat(86).slice(0, 1024) }

export async function benchToolkitC (): Promise<void> {
  const get: BenchRequest = { path: '/r' }
  await printProcessTable('toolkit, part C: one plugin on a bare GET route (small JSON)', { label: 'bare GET route', app: 'tk-bare-get', req: get }, [
    { label: 'cors (allowed Origin, credentials)', app: 'tk-cors', req: { path: '/r', headers: { origin: 'https://admin.example.com' } }, target: 0.9 },
    { label: 'secureHeaders (helmet\'s set of 12 fields)', app: 'tk-secure-headers', req: get, target: 0.9 },
    { label: 'crossOriginProtection (GET)', app: 'tk-cross-origin', req: get, target: 0.95 },
    { label: 'timeout (5 s, answered in time)', app: 'tk-timeout', req: get, target: 0.9 },
    { label: 'cacheControl (200 with its ETag)', app: 'tk-cache-control', req: get, target: 0.9 },
    // The answer a revalidating client gets: no handler, no body.
    { label: 'cacheControl (304, If-None-Match)', app: 'tk-cache-control', req: { path: '/r', headers: { 'if-none-match': cacheEtag('v1.2.3', '/r') } }, expectStatus: 304 },
    { label: 'cleanPath (clean path)', app: 'tk-clean-path', req: get, target: 0.95 },
    { label: 'cleanPath (//r cleaned)', app: 'tk-clean-path', req: { path: '//r' } },
    { label: 'stripSlashes (/r/ stripped)', app: 'tk-strip-slashes', req: { path: '/r/' }, target: 0.95 }
  ], TOOLKIT_LENGTHS)
  await printProcessTable('toolkit, part C: crossOriginProtection on a bare POST route (1 KiB text)', { label: 'bare POST route (1 KiB text)', app: 'tk-bare-post', req: LOREM }, [
    { label: 'crossOriginProtection (POST, Sec-Fetch-Site: same-origin)', app: 'tk-cross-origin-post', req: { ...LOREM, headers: { ...LOREM.headers, 'sec-fetch-site': 'same-origin' } }, target: 0.95 },
    // An older browser's request: no Sec-Fetch-Site, so the Origin is parsed and compared (here: a trusted one).
    { label: 'crossOriginProtection (POST, trusted Origin, no Sec-Fetch-Site)', app: 'tk-cross-origin-post', req: { ...LOREM, headers: { ...LOREM.headers, origin: 'https://sso.example.com' } } }
  ], TOOLKIT_LENGTHS)
}
