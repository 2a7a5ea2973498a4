/**
 * Test fixtures for the avatar proxy: real images made with sharp, hostile inputs, and a picture server on
 * 127.0.0.1 that misbehaves in each way the issue lists (never answers, endless body, redirect loops...).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { EventEmitter, once } from 'node:events'
import { crc32, deflateSync, gzipSync } from 'node:zlib'
import sharp from 'sharp'

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A JPEG of the given size with a colour gradient (so resizing and re-encoding are visible). */
export async function jpeg (width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3)
  for (let i = 0; i < width * height; i++) raw.set([i % 256, (i >> 8) % 256, 128], i * 3)
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg().toBuffer()
}

export async function png (width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer()
}

/** A PNG of a few hundred bytes whose header claims `width` x `height` pixels: a decompression bomb. */
export function bombPng (width = 100_000, height = 100_000): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4)
    len.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([len, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(4096))), chunk('IEND', Buffer.alloc(0))])
}

export const SVG_WITH_SCRIPT = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><script>alert(document.cookie)</script><rect width="64" height="64"/></svg>'
export const HTML_WITH_SCRIPT = '<!doctype html><html><body><script>alert(document.cookie)</script></body></html>'

export interface PictureServer {
  base: string
  /** Bytes written by the endless-body route so far (to show the fetch stopped early). */
  streamed: () => number
  /** Paths requested so far (to show a refused target was never contacted). */
  requests: string[]
  /** Resolves once no client connection is open (to show a fetch was stopped, not left hanging). */
  idle: () => Promise<void>
  /** Resolves when the next request for `path` arrives (to know a fetch is under way, without polling). */
  arrival: (path: string) => Promise<void>
  /**
   * Answers the requests of `/held.jpg` waiting now with the photo: a picture host exactly as slow as the test
   * needs, with no timer (await `arrival('/held.jpg')` first: a request arriving later waits for the next call).
   */
  release: () => void
  /** How many requests of `/held.jpg` are waiting for `release()`. */
  waiting: () => number
  close: () => Promise<void>
}

/** Starts the picture server; routes are listed in `route` below. */
export async function startPictureServer (): Promise<PictureServer> {
  const images = { jpeg: await jpeg(400, 300), png: await png(50, 40) }
  let streamed = 0
  const requests: string[] = []
  const sockets = new Set<Socket>()
  const arrived = new EventEmitter()
  const held: Array<() => void> = []
  const route = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://x')
    const path = url.pathname
    requests.push(path)
    arrived.emit(path)
    const send = (type: string, body: Buffer | string, status = 200): void => {
      res.writeHead(status, { 'content-type': type, ...(path === '/gzip-bomb' ? { 'content-encoding': 'gzip' } : {}) })
      res.end(body)
    }
    const redirect = (to: string): void => { res.writeHead(302, { location: to }); res.end() }
    switch (path) {
      case '/photo.jpg': return send('image/jpeg', images.jpeg)
      case '/small.png': return send('image/png', images.png)
      case '/text': return send('text/plain', 'hello, not an image')
      case '/evil.svg': return send('image/svg+xml', SVG_WITH_SCRIPT)
      case '/evil.html': return send('image/png', HTML_WITH_SCRIPT) // lies about its type
      case '/bomb.png': return send('image/png', bombPng())
      case '/huge': {
        // Declares 50 MiB: must be refused on the header, before any of it is read.
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(50 * 1024 * 1024) })
        res.write(images.png)
        return
      }
      case '/endless': {
        // 50 MiB without a length: must be cut off at the size limit.
        res.writeHead(200, { 'content-type': 'image/png' })
        const piece = Buffer.alloc(64 * 1024, 1)
        const pump = (): void => {
          while (streamed < 50 * 1024 * 1024 && !res.destroyed) {
            streamed += piece.length
            if (!res.write(piece)) { res.once('drain', pump); return }
          }
          res.end()
        }
        pump()
        return
      }
      case '/hang': return // never answers
      case '/held.jpg': {
        // The photo once the test calls release().
        const answer = (): void => { if (!res.destroyed) send('image/jpeg', images.jpeg) }
        held.push(answer)
        res.once('close', () => { const i = held.indexOf(answer); if (i >= 0) held.splice(i, 1) })
        return
      }
      case '/trickle': {
        // A byte every 100 ms for ever: no idle timeout fires.
        res.writeHead(200, { 'content-type': 'image/png' })
        const timer = setInterval(() => res.write(Buffer.from([0])), 100)
        res.once('close', () => clearInterval(timer))
        return
      }
      case '/gzip-bomb': {
        // 400 KiB of gzip, sent unasked, that inflates to 400 MiB.
        const member = gzipSync(Buffer.alloc(1 << 20))
        send('image/png', Buffer.concat(Array<Buffer>(400).fill(member)))
        return
      }
      case '/slow-body': {
        res.writeHead(200, { 'content-type': 'image/png' })
        res.write(images.png.subarray(0, 10))
        return // the rest never comes
      }
      case '/reset': {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': '5000' })
        res.write(images.png.subarray(0, 10))
        setImmediate(() => req.socket.destroy())
        return
      }
      case '/loop': return redirect('/loop')
      case '/redirect-ok': return redirect('/small.png')
      case '/redirect-metadata': return redirect('http://169.254.169.254/latest/meta-data/')
      case '/redirect-file': return redirect('file:///etc/passwd')
      default: return send('application/json', '{"error":"not found"}', 404)
    }
  }
  const server = createServer(route)
  const closed = new EventEmitter()
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => { sockets.delete(s); closed.emit('close') }) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    base: `http://127.0.0.1:${port}`,
    streamed: () => streamed,
    requests,
    idle: async () => { while (sockets.size > 0) await once(closed, 'close') },
    arrival: async (path) => { await once(arrived, path) },
    release: () => { for (const answer of held.splice(0)) answer() },
    waiting: () => held.length,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
