// A TypeDoc plugin of this project (typedoc.json "plugin"): the search index leaves out the pages' figures.
//
// lunr 2, TypeDoc's search, rebuilds a token set from the index in the browser, and its minimisation names a node
// by its edges' labels followed by node ids: with many tokens made of digits and punctuation (a benchmark's
// "3.52x", "20:44", "102–471"), two different nodes can get one name, and the browser's token set then holds words
// that are in no page; a prefix search reaching one throws (test/e2e/browser/site.test.ts loads the index as the
// browser does and fails on any such word). Nobody searches for a measured figure: a token with no letter is left
// out of a page's indexed text unless it is a plain number of up to five digits (an RFC, a port, a status code).
// The page itself is unchanged.
import { IndexEvent } from 'typedoc'

/** Whether lunr should index `token` (as lunr's trimmer would leave it). */
function kept (token) {
  const word = token.replace(/^\W+|\W+$/g, '')
  return word === '' || /\p{L}/u.test(word) || /^\d{1,5}$/.test(word)
}

/** @param {import('typedoc').Application} app */
export function load (app) {
  app.renderer.on(IndexEvent.PREPARE_INDEX, (event) => {
    if (!app.options.getValue('searchInDocuments')) return
    event.searchResults.forEach((reflection, i) => {
      if (!reflection.isDocument()) return
      const text = reflection.content.flatMap((part) => part.text).join('\n')
      event.searchFields[i] = { ...event.searchFields[i], document: text.split(/([\s-]+)/).filter((t, j) => j % 2 === 1 || kept(t)).join('') }
    })
  })
}
