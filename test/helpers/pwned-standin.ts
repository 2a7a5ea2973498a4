/**
 * A local stand-in for Have I Been Pwned's Pwned Passwords range API (https://haveibeenpwned.com/API/v3#PwnedPasswords):
 * `GET /range/{first 5 hex of the SHA-1}` answers `SUFFIX:COUNT` lines (35 uppercase hex, CRLF) of its corpus, and
 * with `Add-Padding: true` adds made-up suffixes of count 0, as the real service does. It records the prefixes
 * and headers it was asked with, so a test can see that no more than 5 characters of a hash ever left.
 */
import { createHash, randomBytes } from 'node:crypto'
import Fastify from 'fastify'

export interface PwnedStandin {
  /** The range API's base (`…/range/`). */
  rangeUrl: string
  /** Adds a password to the corpus, seen `count` times. */
  breach(password: string, count: number): void
  /** What each request asked: its path and its Add-Padding header. */
  readonly asked: Array<{ path: string; padding: string | undefined }>
  /** `slow` never answers; `down` answers 503; `garbage` answers 200 with a proxy's HTML page, `empty` 200 with nothing. */
  mode: 'ok' | 'slow' | 'down' | 'garbage' | 'empty'
  close(): Promise<void>
}

export const sha1Hex = (password: string): string => createHash('sha1').update(password).digest('hex').toUpperCase()

export async function pwnedStandin (): Promise<PwnedStandin> {
  const corpus = new Map<string, number>()
  const asked: PwnedStandin['asked'] = []
  const held: Array<() => void> = []
  const app = Fastify()
  const standin: PwnedStandin = {
    rangeUrl: '',
    breach: (password, count) => { corpus.set(sha1Hex(password), count) },
    asked,
    mode: 'ok',
    close: async () => { for (const release of held) release(); await app.close() }
  }
  app.get<{ Params: { prefix: string } }>('/range/:prefix', async (request, reply) => {
    const padding = request.headers['add-padding']
    asked.push({ path: request.url, padding: typeof padding === 'string' ? padding : undefined })
    if (standin.mode === 'slow') await new Promise<void>((resolve) => { held.push(resolve) })
    if (standin.mode === 'down') return await reply.code(503).send('down')
    if (standin.mode === 'garbage') return await reply.code(200).type('text/html').send('<html><body>Please sign in to the guest network</body></html>')
    if (standin.mode === 'empty') return await reply.code(200).type('text/plain').send('')
    const prefix = request.params.prefix
    if (!/^[0-9A-Fa-f]{5}$/.test(prefix)) return await reply.code(400).send('The hash prefix was not in a valid format')
    const lines = [...corpus].filter(([h]) => h.startsWith(prefix.toUpperCase())).map(([h, n]) => `${h.slice(5)}:${n}`)
    if (padding === 'true') {
      for (let i = 0; i < 20; i++) lines.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`)
    }
    return await reply.type('text/plain').send(lines.join('\r\n'))
  })
  standin.rangeUrl = `${await app.listen({ port: 0, host: '127.0.0.1' })}/range/`
  return standin
}
