/**
 * The load of the instruction counts (bench/callgrind.ts): a fixed number of requests over connections that stay
 * open from the warm-up to the last phase, each connection sending its next request when the answer to the last
 * one is in (no pipelining), every request the same bytes (`GET <path> HTTP/1.1`, `Host`, the case's headers).
 *
 * Autocannon opens its connections for each run and closes them at its end. Under valgrind that was not neutral:
 * each phase began with new sockets and ended with their end-of-stream and close, paths V8 met too seldom to
 * optimise for, and their first runs deoptimised the stream code of every request ("wrong map", "insufficient
 * type feedback"): some 50 functions were compiled again in every phase, even after 40,000 requests of warm-up,
 * and a phase counted 74,000 to 207,000 instructions per request for one bare route. Connections kept open make a
 * phase what every request in it does, and nothing else.
 */
import { connect, type Socket } from 'node:net'
import type { BenchRequest } from './lib.js'

/** One open connection: sends the request, resolves with the status of the answer once the whole answer is in. */
class Connection {
  private buffered: Buffer = Buffer.alloc(0)
  private waiting: ((status: number) => void) | undefined
  private failed: ((err: Error) => void) | undefined

  private constructor (private readonly socket: Socket, private readonly request: Buffer) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => { this.received(chunk) })
    socket.on('error', (err) => { this.failed?.(err) })
    socket.on('close', () => { this.failed?.(new Error('the server closed a connection of the load')) })
  }

  static async open (port: number, request: Buffer): Promise<Connection> {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => { socket.once('connect', resolve).once('error', reject) })
    return new Connection(socket, request)
  }

  async send (): Promise<number> {
    return await new Promise<number>((resolve, reject) => {
      this.waiting = resolve
      this.failed = reject
      this.socket.write(this.request)
    })
  }

  close (): void {
    this.failed = undefined
    this.socket.destroy()
  }

  /** Completes the answer waited for once its head and `content-length` bytes of body are in. */
  private received (chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    const end = this.buffered.indexOf('\r\n\r\n')
    if (end === -1) return
    const head = this.buffered.subarray(0, end).toString('latin1')
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    if (length === null) {
      this.failed?.(new Error(`an answer without content-length: ${head.split('\r\n')[0]}`))
      return
    }
    const total = end + 4 + Number(length[1])
    if (this.buffered.length < total) return
    if (this.buffered.length > total) {
      this.failed?.(new Error('more bytes than one answer'))
      return
    }
    this.buffered = Buffer.alloc(0)
    const done = this.waiting
    this.waiting = undefined
    done?.(Number(head.slice(9, 12)))
  }
}

/** The connections of one count; `run(n)` sends n requests over them, at most one in flight per connection. */
export class KeepAliveLoad {
  private constructor (private readonly connections: Connection[]) {}

  static async open (port: number, req: BenchRequest, connections: number): Promise<KeepAliveLoad> {
    const lines = [`${req.method ?? 'GET'} ${req.path} HTTP/1.1`, `host: 127.0.0.1:${port}`]
    for (const [name, value] of Object.entries(req.headers ?? {})) lines.push(`${name}: ${value}`)
    if (req.body !== undefined) lines.push(`content-length: ${Buffer.byteLength(req.body)}`)
    const request = Buffer.from(lines.join('\r\n') + '\r\n\r\n' + (req.body ?? ''), 'latin1')
    return new KeepAliveLoad(await Promise.all(Array.from({ length: connections }, async () => await Connection.open(port, request))))
  }

  /** Sends `requests` requests; resolves with how many were answered with another status than 2xx. */
  async run (requests: number): Promise<number> {
    let left = requests
    let bad = 0
    await Promise.all(this.connections.map(async (c) => {
      while (left > 0) {
        left--
        const status = await c.send()
        if (status < 200 || status > 299) bad++
      }
    }))
    return bad
  }

  close (): void {
    for (const c of this.connections) c.close()
  }
}
