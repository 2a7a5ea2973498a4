/**
 * Starting the demo in tests: free ports for everything it listens on, a temporary avatar store, and its
 * output captured line by line so tests can wait for a line (an email's token, a log record).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runDemo, type Demo, type DemoEnv, type DemoIO } from '../../example/server.js'

export class CapturedIO implements DemoIO {
  readonly outLines: string[] = []
  readonly errLines: string[] = []
  private waiters: Array<{ re: RegExp; resolve: (m: RegExpMatchArray) => void }> = []

  out = (line: string): void => { this.outLines.push(line); this.wake(line) }
  err = (line: string): void => { this.errLines.push(line); this.wake(line) }

  /**
   * The first line (already written or still to come) matching `re`; rejects after `ms`, a limit on a hang (with
   * the pattern in the message), not a measure: a loaded machine may take seconds.
   */
  async waitFor (re: RegExp, ms = 60_000): Promise<RegExpMatchArray> {
    for (const line of [...this.outLines, ...this.errLines]) {
      const m = line.match(re)
      if (m !== null) return m
    }
    return await new Promise((resolve, reject) => {
      const waiter = { re, resolve: (m: RegExpMatchArray) => { clearTimeout(timer); resolve(m) } }
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter)
        reject(new Error(`no output line matched ${re} within ${ms} ms`))
      }, ms)
      this.waiters.push(waiter)
    })
  }

  private wake (line: string): void {
    for (const w of [...this.waiters]) {
      const m = line.match(w.re)
      if (m !== null) { this.waiters = this.waiters.filter((x) => x !== w); w.resolve(m) }
    }
  }
}

export interface StartedDemo { demo: Demo; io: CapturedIO; stop(): Promise<void> }

/** Starts the demo on free ports with a temporary lmdb avatar store; `env` adds or overrides variables. */
export async function startDemo (env: DemoEnv = {}): Promise<StartedDemo> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-'))
  const io = new CapturedIO()
  const demo = await runDemo({
    PORT: '0', DEV_AUTH_PORT: '0', CUSTOM_AUTH_PORT: '0', AVATAR_STORE: `bolt://${join(dir, 'avatars.db')}`, ...env
  }, io)
  if (demo === undefined) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`demo did not start: ${io.errLines.join(' / ')}`)
  }
  return { demo, io, stop: async () => { await demo.close(); rmSync(dir, { recursive: true, force: true }) } }
}

/** Holds a port on 127.0.0.1 (as the demo binds) until closed. */
export async function occupyPort (): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** A port that was free a moment ago (for checking that a failed start released it). */
export async function freePort (): Promise<number> {
  const held = await occupyPort()
  await held.close()
  return held.port
}

/**
 * Whether something accepts connections on 127.0.0.1:`port`: a TCP connection, which the kernel completes for a
 * listening socket however busy its process is, and refuses at once otherwise (no time limit to guess).
 */
export async function isListening (port: number): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { socket.destroy(); resolve(false) })
  })
}

/** A token of the demo's captcha stand-in, as its "I am not a robot" box gets one (for the password login `local`). */
export async function demoCaptchaToken (base: string): Promise<string> {
  const r = await fetch(`${base}/captcha-standin/solve`, { method: 'POST' })
  if (r.status !== 200) throw new Error(`captcha stand-in answered ${r.status}`)
  return ((await r.json()) as { token: string }).token
}
