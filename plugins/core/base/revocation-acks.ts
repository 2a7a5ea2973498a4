/**
 * Acknowledged revocation messages. A revocation is published with an id; every instance that hears it applies
 * it to its memory first and then publishes `{a: id}` on the same channel. The revoking instance waits until as
 * many acknowledgements arrived as the store delivered the message to (PUBLISH's answer), or until a deadline,
 * so that its answer (a logout's, `revokeSession`'s) comes after every listening instance refuses the session.
 */
import { randomBytes } from 'node:crypto'

/** One revocation waiting for acknowledgements. */
interface Waiter { acks: number; expected: number; done: () => void }

export class Acknowledgements {
  private readonly waiting = new Map<string, Waiter>()

  constructor (private readonly deadlineMs: number) {}

  /**
   * Publishes through `publish(id)` (which resolves with the number of subscribers reached, or nothing when the
   * store cannot tell) and resolves once that many acknowledgements of `id` arrived, or at the deadline.
   * Acknowledgements may arrive before `publish` resolves (an in-process store delivers at once): they are
   * counted from the start.
   */
  async publishAndWait (publish: (id: string) => Promise<number | void>): Promise<void> {
    const id = randomBytes(12).toString('base64url')
    let timer: NodeJS.Timeout | undefined
    const all = new Promise<void>((resolve) => { this.waiting.set(id, { acks: 0, expected: Infinity, done: resolve }) })
    try {
      const reached = await publish(id)
      const waiter = this.waiting.get(id)!
      if (typeof reached !== 'number' || waiter.acks >= reached) return
      waiter.expected = reached
      await Promise.race([all, new Promise<void>((resolve) => { timer = setTimeout(resolve, this.deadlineMs) })])
    } finally {
      clearTimeout(timer)
      this.waiting.delete(id)
    }
  }

  /** Counts an acknowledgement heard on the channel (most are for other instances' revocations: ignored). */
  acknowledged (id: string): void {
    const waiter = this.waiting.get(id)
    if (waiter === undefined) return
    waiter.acks++
    if (waiter.acks >= waiter.expected) waiter.done()
  }
}
