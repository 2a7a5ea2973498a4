/**
 * Case-insensitive search for many words in one pass over the text: an Aho–Corasick automaton over the UTF-16
 * code units of the lower-cased words, compiled into a full transition table, so each byte or character of a
 * body costs one table lookup whatever the number of words. A body is fed chunk by chunk; the automaton's state
 * carries a word across chunk boundaries.
 *
 * An ASCII chunk is scanned as bytes, folding A–Z to a–z (for ASCII text that is what `toLowerCase` does); a
 * chunk with other bytes is decoded and lower-cased first (a multi-byte character split across chunks waits
 * for its last bytes), so `CAFÉ` matches `café` as before.
 *
 * Size: the table has (letters in all words + 1) × (distinct characters + 1) entries of 4 bytes.
 */
import { isAscii } from 'node:buffer'

export class WordMatcher {
  /** Column of each ASCII byte (upper case folded); 0 for bytes that occur in no word. */
  private readonly asciiColumn = new Uint16Array(256)
  /** Column of each non-ASCII code unit that occurs in a word. */
  private readonly wideColumn = new Map<number, number>()
  private readonly columns: number
  /** Row offset of the next state for (row offset + column); -1 when that state completes a word. */
  private readonly next: Int32Array
  /** 1 for the ASCII bytes that lead out of the start state. */
  private readonly leavesStart = new Uint8Array(256)

  constructor (words: readonly string[]) {
    const lower = [...new Set(words.map((w) => w.toLowerCase()))].filter((w) => w !== '')
    let columns = 1
    for (const word of lower) {
      for (let i = 0; i < word.length; i++) {
        const u = word.charCodeAt(i)
        if (u < 128 ? this.asciiColumn[u] === 0 : !this.wideColumn.has(u)) {
          if (u < 128) this.asciiColumn[u] = columns++
          else this.wideColumn.set(u, columns++)
        }
      }
    }
    for (let b = 0x41; b <= 0x5a; b++) this.asciiColumn[b] = this.asciiColumn[b + 0x20]!
    this.columns = columns
    this.next = this.compile(lower)
    for (let b = 0; b < 128; b++) this.leavesStart[b] = this.next[this.asciiColumn[b]!] === 0 ? 0 : 1
  }

  private column (u: number): number {
    return u < 128 ? this.asciiColumn[u]! : (this.wideColumn.get(u) ?? 0)
  }

  /** The trie of the words, then failure links breadth-first, folded into a complete transition table. */
  private compile (words: string[]): Int32Array {
    const C = this.columns
    const trie: number[][] = [new Array<number>(C).fill(-1)]
    const ends: boolean[] = [false]
    for (const word of words) {
      let s = 0
      for (let i = 0; i < word.length; i++) {
        const c = this.column(word.charCodeAt(i))
        if (trie[s]![c] === -1) {
          trie[s]![c] = trie.length
          trie.push(new Array<number>(C).fill(-1))
          ends.push(false)
        }
        s = trie[s]![c]!
      }
      ends[s] = true
    }
    const delta = new Int32Array(trie.length * C)
    const fail = new Int32Array(trie.length)
    const queue: number[] = []
    for (let c = 0; c < C; c++) {
      const t = trie[0]![c]!
      delta[c] = t === -1 ? 0 : t
      if (t !== -1) queue.push(t)
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!
      ends[s] = ends[s]! || ends[fail[s]!]!
      for (let c = 0; c < C; c++) {
        const t = trie[s]![c]!
        if (t === -1) {
          delta[s * C + c] = delta[fail[s]! * C + c]!
        } else {
          fail[t] = delta[fail[s]! * C + c]!
          delta[s * C + c] = t
          queue.push(t)
        }
      }
    }
    // States → row offsets; a transition into a state that ends a word becomes -1 (the search stops there).
    for (let i = 0; i < delta.length; i++) delta[i] = ends[delta[i]!] === true ? -1 : delta[i]! * C
    return delta
  }

  /**
   * True when `text` contains one of the words (any case). ASCII text is scanned as its bytes (the table folds
   * A–Z; encoding a one-byte string is a copy, and the byte loop is twice as fast as one over `charCodeAt`);
   * other text is lower-cased whole first, because lower-casing beyond ASCII depends on context (a final Σ is ς).
   */
  test (text: string): boolean {
    const bytes = Buffer.from(text, 'utf8')
    return isAscii(bytes) ? this.scanAscii(0, bytes) < 0 : this.scanText(0, text.toLowerCase()) < 0
  }

  /** A scanner for one body: feed its chunks in order; true once a word was seen (in this or earlier chunks). */
  scanner (): (chunk: Buffer) => boolean {
    let state = 0
    let carry: Buffer | undefined
    return (chunk) => {
      if (state < 0) return true
      if (carry === undefined && isAscii(chunk)) {
        state = this.scanAscii(state, chunk)
      } else {
        const bytes = carry === undefined ? chunk : Buffer.concat([carry, chunk])
        const end = bytes.length - incompleteTail(bytes)
        carry = end === bytes.length ? undefined : bytes.subarray(end)
        state = this.scanText(state, bytes.toString('utf8', 0, end).toLowerCase())
      }
      return state < 0
    }
  }

  private scanAscii (state: number, bytes: Buffer): number {
    const { next, asciiColumn, leavesStart } = this
    const n = bytes.length
    let s = state
    let i = 0
    while (i < n) {
      if (s === 0) {
        // Most text sits in the start state: skip bytes that cannot begin a word, four at a time.
        while (i + 4 <= n && (leavesStart[bytes[i]!]! | leavesStart[bytes[i + 1]!]! | leavesStart[bytes[i + 2]!]! | leavesStart[bytes[i + 3]!]!) === 0) i += 4
        while (i < n && leavesStart[bytes[i]!] === 0) i++
        if (i === n) break
      }
      s = next[s + asciiColumn[bytes[i++]!]!]!
      if (s < 0) return s
    }
    return s
  }

  private scanText (state: number, text: string): number {
    const { next } = this
    let s = state
    for (let i = 0; i < text.length; i++) {
      s = next[s + this.column(text.charCodeAt(i))]!
      if (s < 0) return s
    }
    return s
  }
}

/** Bytes at the end of `bytes` that start a UTF-8 sequence still missing its last bytes (0–3). */
export function incompleteTail (bytes: Buffer): number {
  const n = bytes.length
  for (let k = 1; k <= Math.min(3, n); k++) {
    const b = bytes[n - k]!
    if ((b & 0xc0) === 0x80) continue // a continuation byte: look further back for the lead byte
    if (b < 0x80) return 0
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1
    return length > k ? k : 0
  }
  return 0
}
