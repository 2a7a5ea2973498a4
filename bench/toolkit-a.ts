/**
 * Toolkit benchmark, first half: a bare route against the same route with one plugin registered, every server in
 * a process of its own (bench/toolkit-apps.ts), alternating rounds, medians (bench/server-process.ts); printed as
 * req/s, ratio to the bare route, and the server's CPU µs per request.
 */
import type { BenchRequest } from './lib.js'
import { printProcessTable } from './process-table.js'
import { TOOLKIT_LENGTHS } from './toolkit-apps.js'

const LOREM: BenchRequest = { path: '/r', method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'lorem ipsum '.repeat(86).slice(0, 1024) }
const JSON_BODY: BenchRequest = {
  path: '/r',
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ id: i, text: 'lorem ipsum dolor sit' })) })
}

export async function benchToolkitA (): Promise<void> {
  const get: BenchRequest = { path: '/r', headers: { 'x-forwarded-for': '8.8.8.8' } }
  await printProcessTable('toolkit, part A: one plugin on a bare GET route', { label: 'bare GET route', app: 'tk-bare-get', req: get }, [
    { label: 'benchmarks', app: 'tk-benchmarks', req: get, target: 0.95 },
    { label: 'trace', app: 'tk-trace', req: get, target: 0.95 },
    { label: 'realIp', app: 'tk-real-ip', req: get, target: 0.95 },
    { label: 'appInfo', app: 'tk-app-info', req: get, target: 0.95 },
    { label: 'onlyFrom (CIDR list, X-Forwarded-For)', app: 'tk-only-from', req: get, target: 0.95 },
    { label: 'logger (null sink)', app: 'tk-logger', req: get, target: 0.85 },
    { label: 'deprecation', app: 'tk-deprecation', req: get },
    { label: 'ping (not a ping path)', app: 'tk-ping', req: get },
    { label: 'recoverer', app: 'tk-recoverer', req: get }
  ], TOOLKIT_LENGTHS)
  await printProcessTable('toolkit, part A: body plugins on a bare POST route (1 KiB text, or 1 KiB JSON)', { label: 'bare POST route (1 KiB text)', app: 'tk-bare-post', req: LOREM }, [
    { label: 'sizeLimit (64 KiB)', app: 'tk-size-limit', req: LOREM, target: 0.95 },
    { label: 'blackWords (3 words)', app: 'tk-black-words', req: LOREM, target: 0.9 },
    { label: 'blackWords (500 words)', app: 'tk-black-words-500', req: LOREM, target: 0.9 },
    { label: 'bare POST route (1 KiB JSON)', app: 'tk-bare-post', req: JSON_BODY },
    // Its ratio is to the text row above; compare it with the bare JSON row.
    { label: 'blackWords (3 words), 1 KiB JSON', app: 'tk-black-words', req: JSON_BODY }
  ], TOOLKIT_LENGTHS)
}
