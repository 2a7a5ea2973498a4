/**
 * The parent's side of bench/peer-server.ts: starts a benchmark server in a process of its own, asks it for its
 * CPU time and counters, stops it. A server that exits early fails the question being asked.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SERVER = fileURLToPath(new URL('./peer-server.js', import.meta.url))

/** What a server sends once it listens: its port, and the cookies and headers its session needs. */
export interface Hello { port: number; cookies: string[]; headers: Record<string, string> }
export interface ServerProcess<N extends string = string> { name: N; child: ChildProcess; hello: Hello }

/** Sends a command (none for the greeting) and resolves with the next message the server sends back. */
export function ask<T> (child: ChildProcess, message?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => { reject(new Error(`benchmark server exited (${code}) before answering`)) }
    child.once('exit', onExit)
    child.once('message', (m) => { child.off('exit', onExit); resolve(m as T) })
    if (message !== undefined) child.send(message)
  })
}

export async function startServer<N extends string> (name: N): Promise<ServerProcess<N>> {
  const child = fork(SERVER, [name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return { name, child, hello: await ask<Hello>(child) }
}

export async function stopServer (server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null) return
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.send({ cmd: 'stop' })
  await exited
}

/** The server's CPU time so far (µs) and its own counters. */
export function cpuOf<S extends object = Record<string, number>> (server: ServerProcess): Promise<{ cpu: number; stats: S }> {
  return ask(server.child, { cmd: 'cpu' })
}
