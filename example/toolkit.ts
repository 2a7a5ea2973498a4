/**
 * The HTTP-toolkit plugins the demo runs: appInfo, requestId (the seed's trace), realIp, the request logger and gzip on
 * every response; ping, health, metrics (loopback only) and the benchmarks report as routes.
 * Registered before the routes, so their hooks cover every route (404s included).
 */
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import {
  appInfoPlugin, benchmarksPlugin, gzipPlugin, healthPlugin, metricsPlugin, pingPlugin, realIpPlugin, requestLoggerPlugin,
  requestIdPlugin, type NamedCheck
} from '../toolkit.js'
import { funcLogger } from '../compat.js'
import { projectFile } from './paths.js'

/** The request-wide plugins; `out` receives one log line per request. */
export async function registerToolkit (app: FastifyInstance, out: (line: string) => void): Promise<void> {
  await app.register(appInfoPlugin, { name: 'gatehouse-demo', version: packageVersion(), org: 'fastify-gatehouse' })
  await app.register(requestIdPlugin)
  await app.register(realIpPlugin)
  // Through a package Logger, so OAuth2 `code`/`state`, confirmation `token`s and `passwd` values in a query
  // are redacted from the request log (the request logger itself masks only password-like names).
  await app.register(requestLoggerPlugin, { logger: funcLogger(out) })
  await app.register(gzipPlugin)
  await app.register(pingPlugin)
  await app.register(benchmarksPlugin, { path: '/bench' })
}

/** The monitoring routes; `checks` say whether the services the demo started still answer. */
export async function registerMonitoring (app: FastifyInstance, checks: NamedCheck[]): Promise<void> {
  await app.register(healthPlugin, { path: '/health', checks })
  // Metrics reveal process internals: loopback clients only, judged by the socket (no header is believed).
  await app.register(metricsPlugin, { path: '/metrics', allow: ['127.0.0.1', '::1'], trustedProxies: [] })
}

/** A health check that a server the demo started still answers HTTP. */
export function answersCheck (name: string, url: () => string | undefined): NamedCheck {
  return {
    name,
    check: async () => {
      const target = url()
      if (target === undefined) throw new Error('not started')
      const res = await fetch(target, { signal: AbortSignal.timeout(2000) })
      await res.body?.cancel()
      if (res.status >= 500) throw new Error(`answered ${res.status}`)
    }
  }
}

function packageVersion (): string {
  const pkg = JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version?: string }
  return pkg.version ?? '0.0.0'
}
