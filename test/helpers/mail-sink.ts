/**
 * Test helper: a real SMTP server (smtp-server) on 127.0.0.1 that keeps every message it accepts.
 * Recipients starting with `nobody@` are refused with 550; `auth` makes it demand these credentials.
 */
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'
import { once } from 'node:events'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A fresh self-signed certificate for 127.0.0.1 (smtp-server's bundled one has expired), or the reason why
 * none can be made here (no openssl command).
 */
export function selfSignedCert (): { key: string; cert: string } | string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-smtp-'))
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') }
  } catch (err) {
    return `cannot make a test certificate with openssl (${(err as Error).message.split('\n')[0]}); apt-get install -y openssl`
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface ReceivedMail {
  from: string
  to: string[]
  headers: Record<string, string>
  /** Body after undoing the transfer encoding, decoded with the declared charset. */
  body: string
  user: string | undefined
  /** The host name the client gave in its EHLO/HELO greeting. */
  helo: string
}

export class MailSink {
  readonly mails: ReceivedMail[] = []
  connections = 0
  port = 0
  private server: SMTPServer | undefined
  private waiters: Array<(m: ReceivedMail) => void> = []

  /** With `auth`, STARTTLS is offered with `tls` and login is required; without, plain SMTP only. */
  constructor (private readonly auth?: { user: string; pass: string }, private readonly tls?: { key: string; cert: string }) {}

  async start (): Promise<void> {
    const opts: SMTPServerOptions = {
      authOptional: this.auth === undefined,
      disabledCommands: this.auth === undefined ? ['AUTH', 'STARTTLS'] : [],
      ...(this.tls ?? {}),
      logger: false,
      onConnect: (_s, cb) => { this.connections++; cb() },
      onAuth: (auth, _s, cb) => {
        if (this.auth !== undefined && auth.username === this.auth.user && auth.password === this.auth.pass) return cb(null, { user: auth.username })
        return cb(Object.assign(new Error('Authentication failed'), { responseCode: 535 }))
      },
      onRcptTo: (addr, _s, cb) => {
        if (addr.address.startsWith('nobody@')) return cb(Object.assign(new Error('5.1.1 no such user here'), { responseCode: 550 }))
        cb()
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = []
        stream.on('data', (c: Buffer) => chunks.push(c))
        stream.on('end', () => {
          const mail = parse(Buffer.concat(chunks).toString('latin1'))
          mail.from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address
          mail.to = session.envelope.rcptTo.map((r) => r.address)
          mail.user = session.user as string | undefined
          mail.helo = session.hostNameAppearsAs
          this.mails.push(mail)
          for (const w of this.waiters.splice(0)) w(mail)
          cb()
        })
      }
    }
    const server = new SMTPServer(opts)
    server.on('error', () => {}) // client-side aborts in failure tests are expected
    this.server = server
    server.listen(this.port, '127.0.0.1')
    await once(server.server, 'listening')
    this.port = (server.server.address() as { port: number }).port
  }

  /** The next message accepted from now on. */
  next (): Promise<ReceivedMail> {
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  async stop (): Promise<void> {
    const s = this.server
    this.server = undefined
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()))
  }
}

function parse (raw: string): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n')
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ')
  const headers: Record<string, string> = {}
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':')
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
  }
  let bytes: Buffer
  const bodyRaw = raw.slice(split + 4)
  const cte = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase()
  if (cte === 'base64') bytes = Buffer.from(bodyRaw.replace(/\s+/g, ''), 'base64')
  else if (cte === 'quoted-printable') {
    const soft = bodyRaw.replace(/=\r\n/g, '')
    bytes = Buffer.from(soft.replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1')
  } else bytes = Buffer.from(bodyRaw, 'latin1')
  const charset = /charset=([^;\s]+)/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase() ?? 'utf-8'
  const body = bytes.toString(charset === 'iso-8859-1' ? 'latin1' : charset === 'us-ascii' ? 'ascii' : 'utf8').replace(/\r\n$/, '')
  return { from: '', to: [], headers, body, user: undefined, helo: '' }
}
