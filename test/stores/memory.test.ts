import t from 'tap'
import { MemoryStore, openAvatarStore } from '../../stores/index.js'
import { storeSuite } from '../helpers/store-suite.js'

storeSuite(t, { fresh: () => () => new MemoryStore(), persistent: false })

t.test('memory:// and no address open a memory store', async (t) => {
  t.type(openAvatarStore('memory://'), MemoryStore)
  t.type(openAvatarStore(), MemoryStore)
})
