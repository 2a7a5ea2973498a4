/** A free loopback port, for servers that must know their port before they listen (no other import here). */
import { createServer } from 'node:net'
import { once } from 'node:events'

/** A port the OS just handed out and that nothing listens on now. */
export async function freePort (): Promise<number> {
  const srv = createServer()
  srv.listen(0, '127.0.0.1')
  await once(srv, 'listening')
  const port = (srv.address() as { port: number }).port
  srv.close()
  await once(srv, 'close')
  return port
}
