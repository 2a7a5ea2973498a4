import t from 'tap'
import { MemoryStore, newStore } from '../../stores/index.js'
import { storeSuite } from './store-suite.js'

storeSuite(t, { fresh: () => () => new MemoryStore(), persistent: false })

t.test('memory:// and no address open a memory store', async (t) => {
  t.type(newStore('memory://'), MemoryStore)
  t.type(newStore(), MemoryStore)
})
