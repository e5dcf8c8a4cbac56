package console

import (
	"crypto/sha256"
	"encoding/base64"
)

// SandboxPath is where the custom-action sandbox is served, below Base.
const SandboxPath = "sandbox.html"

// The custom-action sandbox: the page the console frames (an iframe with
// sandbox="allow-scripts") to run a JavaScript custom action's code. It is a
// page of its own, served with its own policy, because the code needs eval
// (new Function), which the console's policy refuses, and because it must
// not run with the console's origin: the policy's `sandbox allow-scripts`
// gives the page an opaque origin, so the code reads no cookie, storage or
// token of the console and cannot call the api as the user; `default-src
// 'none'` leaves it no request of any kind (fetch, images, fonts).
//
// Its script runs each action's code in a dedicated worker made from a blob,
// so that a loop that never ends stalls the worker, not the console's tab:
// the console removes the frame (and with it the worker) after ten seconds.
// The script is inline and allowed by its hash, the only way to allow it
// in an opaque-origin document ('self' matches no source there).
//
// The page answers only its parent (frame-ancestors 'self': only the
// console's own pages may frame it) and posts back {id, ok, result} or
// {id, ok: false, error}; results are plain data (JSON round trip).
const sandboxScript = `'use strict';
const runner = "onmessage = async (e) => {" +
  " const { code, context } = e.data;" +
  " try {" +
  "  const run = new Function('context', '\"use strict\";\\n' + code);" +
  "  const out = await run(context);" +
  "  postMessage({ ok: true, result: out === undefined ? null : JSON.parse(JSON.stringify(out)) });" +
  " } catch (err) { postMessage({ ok: false, error: String((err && err.message) || err) }); }" +
  "};";
window.addEventListener('message', (e) => {
  if (e.source !== window.parent || !e.data || typeof e.data.id !== 'string' || typeof e.data.code !== 'string') return;
  const { id, code, context } = e.data;
  const worker = new Worker(URL.createObjectURL(new Blob([runner], { type: 'text/javascript' })));
  worker.onmessage = (m) => { worker.terminate(); window.parent.postMessage(Object.assign({}, m.data, { id }), '*'); };
  worker.onerror = (err) => { worker.terminate(); window.parent.postMessage({ id, ok: false, error: String(err.message || 'the code failed') }, '*'); };
  worker.postMessage({ code, context });
});
`

// sandboxPage is the page around sandboxScript.
const sandboxPage = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Custom action sandbox</title><script>" +
	sandboxScript + "</script></head><body></body></html>\n"

// SandboxCSP is the sandbox page's policy (see above): its script by hash,
// eval and blob: workers for the code it runs, nothing else; sandboxed.
var SandboxCSP = func() string {
	sum := sha256.Sum256([]byte(sandboxScript))
	src := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	return "default-src 'none'; script-src " + src + " 'unsafe-eval' blob:; worker-src blob:; sandbox allow-scripts; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
}()
