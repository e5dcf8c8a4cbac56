// The console's words all go through the message catalog (docs/CONSOLE.md,
// "Languages"). This check runs in `npm run build` and fails it when:
// - a template holds visible text of its own: a text node with letters, or a
//   static attribute that is read by people (title, label, placeholder,
//   aria-label, alt, caption, …) with words in it;
// - a script holds a sentence in a string (a capitalised word followed by
//   more words), or a label/title/text/… property with a literal;
// - a message of the catalog does not compile (vue-i18n's syntax: a literal
//   @ { } | $ must be quoted, {'@'}) or a Spanish message names other
//   values than its English one;
// - a key written in a t('…') call or a keypath="…" is not in the English
//   catalog (keys built at run time, t(`shell.nav.${x}`), are not checked).
// A line may opt out with a trailing `// i18n-ok: <why>` (scripts) or
// `<!-- i18n-ok -->` just before the element (templates): for things that are
// not words of the console (product names, code, sample data).
import { readdirSync, readFileSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { join, relative, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { tmpdir } from 'node:os'
import { parse } from 'vue/compiler-sfc'
import ts from 'typescript'
import { baseCompile } from '@intlify/message-compiler'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const src = join(root, 'src')
const problems = []
const usedKeys = [] // [where, key]

function files(dir, ext) {
  const out = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...files(p, ext))
    else if (e.name.endsWith(ext)) out.push(p)
  }
  return out
}

const letters = /\p{L}{2,}/u
// Attributes whose value is data, code or an address, never words shown.
const dataAttrs = new Set([
  'class', 'id', 'for', 'name', 'type', 'href', 'src', 'rel', 'target', 'role', 'autocomplete', 'inputmode',
  'accept', 'pattern', 'lang', 'method', 'step', 'min', 'max', 'value', 'key', 'ref', 'tabindex', 'scope',
  'colspan', 'rowspan', 'spellcheck', 'enterkeyhint', 'dir', 'wrap', 'sandbox', 'allow', 'referrerpolicy',
  'loading', 'decoding', 'crossorigin', 'preload', 'kind', 'srclang', 'form', 'list', 'headers', 'datetime',
  'permission', 'level', 'width', 'height', 'viewBox', 'd', 'fill', 'stroke', 'xmlns', 'keypath', 'tag',
  'as', 'is', 'slot', 'mode', 'variant', 'size', 'icon', 'kind', 'scope', 'capture', 'download', 'media',
  'integrity', 'nonce', 'rows', 'cols', 'maxlength', 'minlength', 'accesskey', 'ping', 'shape', 'coords',
])
const isDataAttr = (name) =>
  dataAttrs.has(name) || name.startsWith('data-') || name.startsWith('aria-') && !['aria-label', 'aria-description', 'aria-placeholder', 'aria-roledescription', 'aria-valuetext'].includes(name)

function checkTemplate(file, node, optOut) {
  if (!node) return
  const children = node.children ?? []
  let skipNext = false
  for (const child of children) {
    if (child.type === 3 /* comment */) {
      if (/i18n-ok/.test(child.content)) skipNext = true
      continue
    }
    if (skipNext) {
      skipNext = false
      if (child.type === 1 || child.type === 2) continue
    }
    if (optOut) continue
    if (child.type === 2 /* text */ && letters.test(child.content)) {
      problems.push(`${file}:${child.loc.start.line}: text not in the catalog: ${JSON.stringify(child.content.trim().slice(0, 60))}`)
    }
    if (child.type === 1 /* element */) {
      for (const p of child.props) {
        if (p.type === 6 /* static attribute */ && p.value && !isDataAttr(p.name) && letters.test(p.value.content)) {
          problems.push(`${file}:${p.loc.start.line}: attribute ${p.name} not in the catalog: ${JSON.stringify(p.value.content.slice(0, 60))}`)
        }
      }
      // <code>, <pre>, <kbd> and <samp> show code, not words of the console.
      if (['code', 'pre', 'kbd', 'samp', 'style', 'script'].includes(child.tag)) continue
      checkTemplate(file, child, false)
    } else if (child.type === 9 /* if */ || child.type === 11 /* for */) {
      for (const b of child.branches ?? [child]) checkTemplate(file, b, false)
    }
  }
}

// A sentence: a capitalised word, then at least one more word ("Save the
// campaign", "Cannot reach the server."). Words of code are not sentences:
// identifiers, paths, CSS, MIME types, HTTP headers.
const sentence = /^[A-Z][a-z’']+(?:[ ,;:–-]+[\p{L}’'0-9.%{}()]+)+[.!?…:]?$/u
const shownProp = /\b(label|title|text|description|placeholder|caption|heading|message|hint|summary|confirm|reason|emptyText)\s*:\s*(['"`])([^'"`]*\p{L}{2,}[^'"`]*)\2/u

function collectKeys(file, code, firstLine) {
  code.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\b(?:t|\$t|tc|te)\(\s*'([A-Za-z0-9_.]+)'|keypath="([A-Za-z0-9_.]+)"/g)) usedKeys.push([`${file}:${firstLine + i}`, m[1] ?? m[2]])
  })
}

function checkScript(file, code, firstLine) {
  const lines = code.split('\n')
  lines.forEach((line, i) => {
    if (/i18n-ok/.test(line) || /^\s*(import|export \* from|\/\/|\*|\/\*)/.test(line)) return
    const where = `${file}:${firstLine + i}`
    const m = shownProp.exec(line)
    if (m && !/^[a-z][\w.:-]*$/.test(m[3])) {
      problems.push(`${where}: ${m[1]} not in the catalog: ${JSON.stringify(m[3].slice(0, 60))}`)
      return
    }
    for (const s of line.matchAll(/'([^'\\]*(?:\\.[^'\\]*)*)'|`([^`\\]*)`|"([^"\\]*)"/g)) {
      // A template literal's values count as words: `The call with ${who} ended.`
      const v = s[1] ?? s[2]?.replace(/\$\{[^}]*\}/g, 'x') ?? s[3] ?? ''
      if (sentence.test(v) && /\s/.test(v) && (v.match(/\p{L}{2,}/gu) ?? []).length >= 2) {
        problems.push(`${where}: sentence not in the catalog: ${JSON.stringify(v.slice(0, 60))}`)
        break
      }
    }
  })
}

for (const file of files(src, '.vue')) {
  const rel = relative(root, file)
  collectKeys(rel, readFileSync(file, 'utf8'), 1)
  const { descriptor, errors } = parse(readFileSync(file, 'utf8'), { filename: file })
  if (errors.length) problems.push(`${rel}: ${errors[0].message}`)
  if (descriptor.template?.ast) checkTemplate(rel, descriptor.template.ast, false)
  for (const block of [descriptor.script, descriptor.scriptSetup]) {
    if (block) checkScript(rel, block.content, block.loc.start.line)
  }
}
for (const file of files(src, '.ts')) {
  const rel = relative(root, file)
  if (rel.startsWith('src/i18n/') || rel.endsWith('.d.ts')) continue
  collectKeys(rel, readFileSync(file, 'utf8'), 1)
  checkScript(rel, readFileSync(file, 'utf8'), 1)
}

// The catalogs: transpile src/i18n to plain modules and load them.
const out = join(tmpdir(), `wharf-i18n-check-${process.pid}`)
mkdirSync(out, { recursive: true })
try {
  for (const file of files(join(src, 'i18n'), '.ts')) {
    const js = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    }).outputText.replace(/from '(\.{1,2}\/[^']+)'/g, (_, p) => `from '${p.endsWith('/en') || p.endsWith('/es') ? p + '/index' : p}.mjs'`)
    const target = join(out, relative(join(src, 'i18n'), file)).replace(/\.ts$/, '.mjs')
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, js)
  }
  const en = (await import(pathToFileURL(join(out, 'en/index.mjs')).href)).default
  const es = (await import(pathToFileURL(join(out, 'es/index.mjs')).href)).default

  const names = (msg) => new Set([...msg.matchAll(/\{\s*([A-Za-z_]\w*)\s*\}/g)].map((m) => m[1]))
  const walk = (obj, path, fn) => {
    for (const [k, v] of Object.entries(obj)) {
      const p = path ? `${path}.${k}` : k
      if (typeof v === 'string') fn(p, v)
      else if (v && typeof v === 'object') walk(v, p, fn)
      else problems.push(`catalog ${p}: not a string`)
    }
  }
  const get = (obj, path) => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj)
  for (const [where, key] of usedKeys) {
    if (typeof get(en, key) !== 'string') problems.push(`${where}: no English message ${key}`)
  }
  for (const [lang, catalog] of [['en', en], ['es', es]]) {
    walk(catalog, '', (p, msg) => {
      baseCompile(msg, {
        onError: (e) => problems.push(`catalog ${lang} ${p}: ${e.message}: ${JSON.stringify(msg)}`),
        jit: true,
      })
      if (lang === 'es') {
        const english = get(en, p)
        if (typeof english !== 'string') problems.push(`catalog es ${p}: no English message`)
        else if ([...names(msg)].sort().join() !== [...names(english)].sort().join())
          problems.push(`catalog es ${p}: values {${[...names(msg)]}} differ from English {${[...names(english)]}}`)
      }
    })
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}

if (problems.length) {
  // exitCode, not exit(): a pipe gets the whole list before the process ends.
  console.error(problems.join('\n') + `\ni18n check: ${problems.length} problem(s)`)
  process.exitCode = 1
} else {
  console.log('i18n check: every string is in the catalog')
}
