// The custom-action sandbox (sandbox.html): the console posts {id, code,
// context}; the code runs as the body of a function of `context` (it may
// return a value or a promise of one), and the page posts back {id, ok,
// result} or {id, ok: false, error}. Only the console that framed this
// page is answered, and only its messages are run.
'use strict'
window.addEventListener('message', async (event) => {
  if (event.source !== window.parent || !event.data || typeof event.data.code !== 'string') return
  const { id, code, context } = event.data
  let reply
  try {
    const run = new Function('context', '"use strict";\n' + code)
    const out = await run(context)
    // Only plain data goes back (no functions, no DOM objects).
    reply = { id, ok: true, result: out === undefined ? null : JSON.parse(JSON.stringify(out)) }
  } catch (err) {
    reply = { id, ok: false, error: String((err && err.message) || err) }
  }
  window.parent.postMessage(reply, '*')
})
