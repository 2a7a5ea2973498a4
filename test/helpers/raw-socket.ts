import { connect } from 'node:net'

/**
 * Writes raw bytes on a fresh connection and resolves with everything the server sent until it closed the
 * connection. With `idleMs`, the client half-closes after that long without data (for servers that keep a
 * healthy connection open); without it, only the server's close ends the exchange.
 */
export function rawExchange (port: number, data: string, idleMs?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1')
    let got = ''
    sock.setEncoding('latin1')
    sock.on('data', (d: string) => { got += d })
    sock.on('error', reject)
    sock.on('close', () => { resolve(got) })
    sock.write(data)
    if (idleMs !== undefined) sock.setTimeout(idleMs, () => sock.end())
  })
}
