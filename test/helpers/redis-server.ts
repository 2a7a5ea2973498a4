/**
 * Test helper: a real redis-server on a free loopback port, without persistence. `stop()` and `start()` may be
 * called again to simulate an outage on the same port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { freePort } from '../../bench/free-port.js'

export { freePort }

/** Why Redis tests cannot run here, or undefined when redis-server is installed. */
export function redisMissingReason (): string | undefined {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (r.error !== undefined || r.status !== 0) {
    return 'redis-server is not installed (apt-get install -y redis-server; CI installs it)'
  }
  return undefined
}

export class RedisServer {
  port = 0
  private child: ChildProcess | undefined

  get url (): string { return `redis://127.0.0.1:${this.port}` }

  async start (): Promise<void> {
    if (this.port === 0) this.port = await freePort()
    const child = spawn('redis-server', [
      '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'notice'
    ], { stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    let out = ''
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        out += chunk.toString()
        if (out.includes('Ready to accept connections')) { child.stdout!.off('data', onData); resolve() }
      }
      child.stdout!.on('data', onData)
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)))
      child.once('error', reject)
    })
    child.stdout!.resume()
    child.stderr!.resume()
  }

  /** Freezes the server (SIGSTOP): connections stay open, commands queue unanswered, as with a hung Redis. */
  pause (): void {
    this.child?.kill('SIGSTOP')
  }

  /** Lets a paused server run again (SIGCONT): it works through what queued meanwhile, in order. */
  resume (): void {
    this.child?.kill('SIGCONT')
  }

  async stop (): Promise<void> {
    const child = this.child
    this.child = undefined
    if (child === undefined || child.exitCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGCONT') // a paused server would not act on SIGTERM
    child.kill('SIGTERM')
    await exited
  }
}

/**
 * A real redis-server for a test file, stopped at its end; undefined (and a skipped test named `name` saying
 * why) when redis-server is not installed.
 */
export async function redisForTests (t: { test(name: string, opts: { skip: string }, fn: () => Promise<void>): unknown; teardown(fn: () => unknown): void }, name: string): Promise<RedisServer | undefined> {
  const missing = redisMissingReason()
  if (missing !== undefined) {
    t.test(name, { skip: missing }, async () => {})
    return undefined
  }
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  return redis
}
