/**
 * profiler: diagnostics under the register prefix (e.g. `{ prefix: '/debug' }`):
 *   GET /pprof/ (and /pprof)     an index page
 *   GET /pprof/profile?seconds=N a CPU profile of the next N seconds (default 30, 1..maxSeconds), as a
 *                                `.cpuprofile` file that Chrome DevTools (Performance / JavaScript Profiler) opens
 *   GET /pprof/heap              a V8 heap snapshot (`.heapsnapshot`, DevTools Memory tab)
 *   GET /vars                    the metrics variables (expvar style)
 * Everything sits behind an IP allow-list, loopback only unless `allow` says otherwise: profiles and heap
 * snapshots reveal memory contents. One profile or snapshot runs at a time (409 otherwise).
 */
import { Session } from 'node:inspector/promises'
import { getHeapSnapshot } from 'node:v8'
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { OptionsError, sendError } from '../../lib/errors.js'
import { sendPage } from '../../lib/html.js'
import { defaultVars, guardWithAllowList, serveVars, VarRegistry } from './metrics.js'

export interface ProfilerOptions {
  /** Allow-list of client addresses (see onlyFrom). Default loopback: `['127.0.0.0/8', '::1']`. */
  allow?: string[] | undefined
  /** Proxies whose forwarding headers the allow-list believes (see onlyFrom). */
  trustedProxies?: string[] | undefined
  /** Longest CPU profile a request may ask for, seconds. Default 60. */
  maxSeconds?: number | undefined
  /** Variables served at `/vars`; default the process-wide registry. */
  registry?: VarRegistry | undefined
}

const INDEX = `<!doctype html><html><head><meta charset="utf-8"><title>profiler</title></head><body>
<h1>profiler</h1><ul>
<li><a href="profile?seconds=30">profile?seconds=30</a>: CPU profile (.cpuprofile, open in Chrome DevTools)</li>
<li><a href="heap">heap</a>: heap snapshot (.heapsnapshot, Chrome DevTools Memory tab)</li>
<li><a href="../vars">vars</a>: variables (JSON)</li>
</ul></body></html>`

// The inspector and the heap are process-wide: one capture at a time across all profiler instances.
let busy = false

/** Parses `seconds`: absent → default; otherwise a whole number from 1 to max, or null. */
export function parseSeconds (raw: unknown, max: number, dflt = 30): number | null {
  if (raw === undefined) return Math.min(dflt, max)
  if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw)) return null
  const n = Number(raw)
  return n >= 1 && n <= max ? n : null
}

async function cpuProfile (seconds: number, aborted: Promise<void>): Promise<unknown> {
  const session = new Session()
  session.connect()
  try {
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
    let timer: NodeJS.Timeout | undefined
    await Promise.race([new Promise<void>((resolve) => { timer = setTimeout(resolve, seconds * 1000) }), aborted])
    clearTimeout(timer)
    const { profile } = await session.post('Profiler.stop')
    return profile
  } finally {
    session.disconnect()
  }
}

function attachment (reply: FastifyReply, name: string): FastifyReply {
  return reply.header('content-disposition', `attachment; filename="${name}"`).header('cache-control', 'no-store')
}

/**
 * Encapsulated (fastify-plugin with `encapsulate: true`): it is a sub-router, so the register `prefix`
 * mounts it and its allow-list hook guards only its own routes.
 */
const profilerPluginImpl: FastifyPluginAsync<ProfilerOptions> = async (fastify, opts) => {
  const maxSeconds = opts.maxSeconds ?? 60
  if (!Number.isInteger(maxSeconds) || maxSeconds < 1 || maxSeconds > 3600) throw new OptionsError('profiler.maxSeconds', 'must be an integer from 1 to 3600')
  const registry = opts.registry ?? defaultVars
  if (!(registry instanceof VarRegistry)) throw new OptionsError('profiler.registry', 'must be a VarRegistry')
  guardWithAllowList(fastify, 'profiler', opts.allow ?? ['127.0.0.0/8', '::1'], opts.trustedProxies)
  serveVars(fastify, '/vars', registry)

  // A page of the package like any other: no script, never framed.
  const index = async (_req: unknown, reply: FastifyReply): Promise<FastifyReply> => sendPage(reply, INDEX)
  fastify.get('/pprof', async (_req, reply) => reply.redirect('pprof/'))
  fastify.get('/pprof/', index)

  fastify.get<{ Querystring: { seconds?: string | undefined } }>('/pprof/profile', async (request, reply) => {
    const seconds = parseSeconds(request.query.seconds, maxSeconds)
    if (seconds === null) return sendError(reply, 400, 'invalid seconds', `must be a whole number from 1 to ${maxSeconds}`)
    if (busy) return sendError(reply, 409, 'profiler busy', 'another profile or snapshot is running')
    busy = true
    try {
      // Stop early when the client disconnects: nobody is left to receive the profile.
      let onClose = (): void => {}
      const aborted = new Promise<void>((resolve) => { onClose = resolve; request.raw.socket.once('close', onClose) })
      try {
        const profile = await cpuProfile(seconds, aborted)
        return attachment(reply, 'profile.cpuprofile').type('application/json').send(JSON.stringify(profile))
      } finally {
        request.raw.socket.off('close', onClose)
      }
    } finally {
      busy = false
    }
  })

  fastify.get('/pprof/heap', async (_request, reply) => {
    if (busy) return sendError(reply, 409, 'profiler busy', 'another profile or snapshot is running')
    busy = true
    try {
      const stream = getHeapSnapshot()
      stream.once('close', () => { busy = false })
      return attachment(reply, 'heap.heapsnapshot').type('application/json').send(stream)
    } catch (err) {
      busy = false
      throw err
    }
  })

}

export const profilerPlugin = fp(profilerPluginImpl, { name: 'gatehouse-profiler', fastify: '5.x', encapsulate: true })
