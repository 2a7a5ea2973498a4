/**
 * Test helper: a TCP proxy on a free loopback port in front of a server, which holds back what the server sends
 * by `ms` (what the client sends passes at once). Order is kept: every chunk waits the same time. A client of
 * Redis behind it hears PUBLISHed messages `ms` late, as an instance on a slow or busy link would; muted, it hears
 * nothing more, as an instance that froze.
 */
import { connect, createServer, type Server, type Socket } from 'node:net'
import { once } from 'node:events'

export interface DelayProxy {
  port: number
  /** From now on, what the server sends is dropped: the client's connections stay open and hear nothing. */
  mute(): void
  close(): Promise<void>
}

export async function delayProxy (targetPort: number, ms: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>()
  let muted = false
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1')
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => { sockets.delete(s) })
      s.on('error', () => { client.destroy(); upstream.destroy() })
    }
    client.pipe(upstream)
    upstream.on('data', (chunk: Buffer) => { if (!muted) setTimeout(() => { if (!client.destroyed && !muted) client.write(chunk) }, ms) })
    upstream.on('end', () => { setTimeout(() => client.end(), ms) })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    port: (server.address() as { port: number }).port,
    mute () { muted = true },
    async close () {
      for (const s of sockets) s.destroy()
      server.close()
      await once(server, 'close')
    }
  }
}
