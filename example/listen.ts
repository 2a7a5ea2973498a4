/**
 * Binding ports. The demo binds its own HTTP server before it builds the app, so a demo started on port 0
 * knows its real address (and with it its public URL) before any plugin needs it.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DemoError } from './config.js'

/** `localhost` is bound on 127.0.0.1: one address, so port 0 means one port (browsers fall back from ::1). */
export const LISTEN_HOST = '127.0.0.1'

/** Starts listening; a busy or forbidden port becomes a one-line DemoError naming it and its variable. */
export async function bindServer (port: number, variable: string): Promise<Server> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ port, host: LISTEN_HOST }, () => { server.off('error', reject); resolve() })
  }).catch((err: unknown) => { throw portError(err, port, variable) })
  return server
}

export function boundPort (server: Server): number {
  return (server.address() as AddressInfo).port
}

/** Stops listening and drops kept-alive connections, so a browser's idle sockets do not hold the exit. */
export async function closeServer (server: Server): Promise<void> {
  if (!server.listening) return
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeAllConnections()
  await closed
}

/** Turns a listen error into the demo's one-line message; other errors pass unchanged. */
export function portError (err: unknown, port: number, variable: string): unknown {
  const code = findCode(err)
  if (code === 'EADDRINUSE') return new DemoError(`port ${port} is already in use (set ${variable} to another port)`)
  if (code === 'EACCES') return new DemoError(`port ${port} needs privileges this user lacks (set ${variable} to a port above 1023)`)
  return err
}

/** The errno code of an error or of any error in its `cause` chain (plugins may wrap the listen error). */
export function findCode (err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e != null && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.code === 'string' && e.code.startsWith('E')) return e.code
  }
  return undefined
}
