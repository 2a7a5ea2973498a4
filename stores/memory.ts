import { assertAvatarId, contentIdOf, isAvatarId, type AvatarStore } from './types.js'

/** Avatars in a Map (`memory://`): the default store; gone when the process ends. */
export class MemoryStore implements AvatarStore {
  private readonly entries = new Map<string, { bytes: Uint8Array; contentId: string }>()

  put (id: string, bytes: Uint8Array): string {
    assertAvatarId(id)
    // A private copy: the caller may reuse its buffer.
    const copy = Uint8Array.prototype.slice.call(bytes)
    const contentId = contentIdOf(copy)
    this.entries.set(id, { bytes: copy, contentId })
    return contentId
  }

  get (id: string): Uint8Array | null {
    return isAvatarId(id) ? this.entries.get(id)?.bytes ?? null : null
  }

  id (id: string): string | null {
    return isAvatarId(id) ? this.entries.get(id)?.contentId ?? null : null
  }

  remove (id: string): void {
    assertAvatarId(id)
    this.entries.delete(id)
  }

  list (): string[] {
    return [...this.entries.keys()]
  }

  close (): void {}
}
