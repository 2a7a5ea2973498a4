/**
 * HTTP requests from a chosen loopback address (`127.0.0.2`, …: every 127/8 address is loopback on Linux), so
 * that a test can play several clients that the server tells apart by address: an attacker flooding from one,
 * a user logging in from another. Keep-alive connections, redirects not followed, cookies handled by the caller.
 */
import { Agent, request } from 'node:http'

export interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

export interface AddressClient {
  /** One request; `headers.cookie` etc. as given. */
  fetch (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Answer>
  close (): void
}

export function fromAddress (localAddress: string, maxSockets = 16): AddressClient {
  const agent = new Agent({ keepAlive: true, localAddress, maxSockets })
  return {
    async fetch (url, init = {}) {
      return await new Promise<Answer>((resolve, reject) => {
        const req = request(url, { method: init.method ?? 'GET', headers: init.headers, agent }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }))
          res.on('error', reject)
        })
        req.on('error', reject)
        req.end(init.body)
      })
    },
    close () { agent.destroy() }
  }
}

/** `name=value` pairs of every Set-Cookie of an answer, for a Cookie header. */
export function cookiesOf (answer: Answer): string {
  const lines = answer.headers['set-cookie'] ?? []
  return (Array.isArray(lines) ? lines : [lines]).map((l) => l.split(';')[0]!).filter((p) => !p.endsWith('=')).join('; ')
}
