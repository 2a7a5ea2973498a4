/**
 * Redis processes on loopback for the scale benchmark and the Cluster/Sentinel tests (Debian's redis-server and
 * redis-cli): one server, a Cluster of 3 masters + 3 replicas, or 1 master + 1 replica + 3 Sentinels, with short
 * failover times (`cluster-node-timeout 1000`, `down-after-milliseconds 1000`). Every process and its folder are
 * gone after `stop()`, and with this process (a benchmark or a test file killed half-way leaves no server behind).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './free-port.js'

export { freePort }

/**
 * Where a node keeps its data: nothing across restarts, and an RDB file of its own. A replica writes the snapshot
 * its master streams to `<dir>/<dbfilename>` and loads it from there; with one file for all nodes, replicas
 * syncing at the same moment loaded each other's snapshots (a replica then held another master's keys, and lost
 * its own master's with it when promoted: the failover case failed in about half the runs).
 */
export function ownData (dir: string, port: number): string[] {
  return ['--dir', dir, '--dbfilename', `dump-${port}.rdb`, '--save', '', '--appendonly', 'no']
}

/** One redis-server process of a cluster (or of a Sentinel setup). */
export class RedisNodeProcess {
  child: ChildProcess | undefined
  constructor (readonly port: number, private readonly args: string[], private readonly config?: string) {}

  async start (): Promise<void> {
    const child = spawn('redis-server', [...(this.config === undefined ? [] : [this.config]), '--port', String(this.port), '--bind', '127.0.0.1', ...this.args], { stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    let out = ''
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        out += chunk.toString()
        if (/Ready to accept connections|Sentinel ID is/.test(out)) { child.stdout!.off('data', onData); resolve() }
      }
      child.stdout!.on('data', onData)
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)))
      child.once('error', reject)
    })
    child.stdout!.resume()
    child.stderr!.resume()
  }

  /** Kills the process (SIGKILL: a crash, nothing written on the way out). */
  async kill (): Promise<void> {
    const child = this.child
    this.child = undefined
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
}

/**
 * Starts the node `make` builds on ports it asks `freePort` for, again on new ports (5 tries) when one was taken
 * meanwhile: on a busy machine another process can bind a port between `freePort` and the server's start.
 */
export async function startOnFreePorts (make: () => Promise<RedisNodeProcess>): Promise<RedisNodeProcess> {
  for (let attempt = 1; ; attempt++) {
    const node = await make()
    try {
      await node.start()
      return node
    } catch (err) {
      if (attempt >= 5 || !/Address already in use/.test(String(err))) throw err
    }
  }
}

export class RedisCluster {
  readonly nodes: RedisNodeProcess[] = []
  readonly dir = mkdtempSync(join(tmpdir(), 'gatehouse-cluster-'))

  /** `redis-cluster://` address of the first two nodes (the rest is discovered). */
  get address (): string { return `redis-cluster://127.0.0.1:${this.nodes[0]!.port},127.0.0.1:${this.nodes[1]!.port}` }

  async start (): Promise<void> {
    // Killed with the test process too (a tap timeout), so no server outlives the file.
    process.once('exit', () => { for (const n of this.nodes) n.child?.kill('SIGKILL'); rmSync(this.dir, { recursive: true, force: true }) })
    const node = async (): Promise<RedisNodeProcess> => {
      const port = await freePort()
      return new RedisNodeProcess(port, [
        '--cluster-enabled', 'yes', '--cluster-port', String(await freePort()), '--cluster-node-timeout', '1000',
        '--cluster-config-file', join(this.dir, `nodes-${port}.conf`), ...ownData(this.dir, port),
        // Replicas start their first sync at once (no 5 s wait for more replicas to join it).
        '--repl-diskless-sync-delay', '0'
      ])
    }
    for (let i = 0; i < 6; i++) this.nodes.push(await startOnFreePorts(node))
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...this.nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8', timeout: 30_000 })
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`)
    await this.ready()
  }

  /** Resolves once every live node reports `cluster_state:ok` and sees 3 masters holding slots. */
  async ready (timeoutMs = 20_000): Promise<void> {
    const until = Date.now() + timeoutMs
    for (;;) {
      const states = await Promise.all(this.nodes.filter((n) => n.child !== undefined).map(async (n) => await this.info(n.port)))
      if (states.every((s) => s.includes('cluster_state:ok') && s.includes('cluster_size:3'))) return
      if (Date.now() > until) throw new Error(`cluster not ready: ${states.join(' | ')}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  /** The port of the master now serving `key`'s slot. */
  async masterOf (key: string): Promise<number> {
    const admin = this.admin(this.nodes.find((n) => n.child !== undefined)!.port)
    try {
      const slot = await admin.cluster('KEYSLOT', key)
      const slots = await admin.cluster('SLOTS') as unknown as Array<[number, number, [string, number]]>
      const range = slots.find(([from, to]) => slot >= from && slot <= to)!
      return range[2][1]
    } finally { admin.disconnect() }
  }

  /**
   * Resolves once the replicas of the master on `port` are online, have every write it took (equal offsets) and
   * hold as many keys as it does (throws after 5 s). The key count is checked too: equal offsets alone did not
   * show a replica that had loaded another node's snapshot (see `ownData`).
   */
  async replicated (port: number): Promise<void> {
    const admin = this.admin(port)
    try {
      for (const until = Date.now() + 5000; Date.now() < until;) {
        const info = await admin.info('replication')
        const offset = /master_repl_offset:(\d+)/.exec(info)?.[1]
        const replicas = [...info.matchAll(/slave\d+:ip=[^,]*,port=(\d+),state=(\w+),offset=(\d+)/g)]
        if (replicas.length > 0 && replicas.every((r) => r[2] === 'online' && r[3] === offset) &&
          await this.sameKeyCount(port, replicas.map((r) => Number(r[1])))) return
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      throw new Error(`the replicas of ${port} did not catch up`)
    } finally { admin.disconnect() }
  }

  private async sameKeyCount (master: number, replicas: number[]): Promise<boolean> {
    const counts = await Promise.all([master, ...replicas].map(async (port) => {
      const admin = this.admin(port)
      try { return await admin.dbsize() } finally { admin.disconnect() }
    }))
    return counts.every((c) => c === counts[0])
  }

  /** `replicated` for every master. */
  async allReplicated (): Promise<void> {
    for (const n of this.nodes.filter((n) => n.child !== undefined)) {
      const admin = this.admin(n.port)
      const role = await admin.role().finally(() => { admin.disconnect() }) as [string]
      if (role[0] === 'master') await this.replicated(n.port)
    }
  }

  /**
   * Moves `slots` slots from the master on `from` to the master on `to` with `redis-cli --cluster reshard` (keys
   * migrate one by one: clients meanwhile get MOVED and ASK redirections).
   */
  async reshard (from: number, to: number, slots: number): Promise<void> {
    const id = async (port: number): Promise<string> => {
      const admin = this.admin(port)
      try { return await admin.cluster('MYID') as string } finally { admin.disconnect() }
    }
    const args = ['--cluster', 'reshard', `127.0.0.1:${from}`, '--cluster-from', await id(from), '--cluster-to', await id(to),
      '--cluster-slots', String(slots), '--cluster-yes', '--cluster-pipeline', '1']
    const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout!.on('data', (c: Buffer) => { out += c.toString() })
    child.stderr!.on('data', (c: Buffer) => { out += c.toString() })
    const code = await new Promise((resolve) => child.once('exit', resolve))
    if (code !== 0) throw new Error(`reshard failed: ${out.slice(-500)}`)
  }

  node (port: number): RedisNodeProcess { return this.nodes.find((n) => n.port === port)! }

  admin (port: number): Redis { return new Redis(port, '127.0.0.1', { lazyConnect: false, maxRetriesPerRequest: 1 }) }

  private async info (port: number): Promise<string> {
    const admin = this.admin(port)
    try { return await admin.cluster('INFO') as string } catch { return 'no answer' } finally { admin.disconnect() }
  }

  async stop (): Promise<void> {
    await Promise.all(this.nodes.map(async (n) => { await n.kill() }))
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** A master, one replica and three Sentinels watching it (as `mymaster`, quorum 2, down after 1 s). */
export class RedisSentinels {
  readonly dir = mkdtempSync(join(tmpdir(), 'gatehouse-sentinel-'))
  master!: RedisNodeProcess
  replica!: RedisNodeProcess
  readonly sentinels: RedisNodeProcess[] = []

  get address (): string { return `redis-sentinel://${this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/mymaster` }

  async start (): Promise<void> {
    process.once('exit', () => { for (const n of this.all()) n.child?.kill('SIGKILL'); rmSync(this.dir, { recursive: true, force: true }) })
    const dataNode = (extra: string[]) => async (): Promise<RedisNodeProcess> => {
      const port = await freePort()
      return new RedisNodeProcess(port, [...ownData(this.dir, port), ...extra])
    }
    // No 5 s wait before the first (diskless) sync of the replica.
    this.master = await startOnFreePorts(dataNode(['--repl-diskless-sync-delay', '0']))
    this.replica = await startOnFreePorts(dataNode(['--replicaof', '127.0.0.1', String(this.master.port)]))
    const sentinel = async (): Promise<RedisNodeProcess> => {
      const port = await freePort()
      const conf = join(this.dir, `sentinel-${port}.conf`)
      writeFileSync(conf, [`sentinel monitor mymaster 127.0.0.1 ${this.master.port} 2`, 'sentinel down-after-milliseconds mymaster 1000',
        'sentinel failover-timeout mymaster 3000', `dir ${this.dir}`].join('\n') + '\n')
      return new RedisNodeProcess(port, ['--sentinel'], conf)
    }
    for (let i = 0; i < 3; i++) this.sentinels.push(await startOnFreePorts(sentinel))
    await this.replicated()
  }

  /** Resolves once the replica has every write of the master (throws after 5 s). */
  async replicated (): Promise<void> {
    const admin = new Redis(this.master.port, '127.0.0.1', { maxRetriesPerRequest: 1 })
    try {
      for (const until = Date.now() + 5000; Date.now() < until;) {
        const info = await admin.info('replication')
        const offset = /master_repl_offset:(\d+)/.exec(info)?.[1]
        const replica = /slave0:.*state=online.*offset=(\d+)/.exec(info)?.[1]
        if (replica !== undefined && replica === offset) return
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      throw new Error('the replica did not catch up')
    } finally { admin.disconnect() }
  }

  private all (): RedisNodeProcess[] { return [this.master, this.replica, ...this.sentinels].filter((n) => n !== undefined) }

  async stop (): Promise<void> {
    await Promise.all(this.all().map(async (n) => { await n.kill() }))
    rmSync(this.dir, { recursive: true, force: true })
  }
}
