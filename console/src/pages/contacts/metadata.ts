// A contact's metadata as the specification says to show it: top-level
// primitives are rows of a general section (booleans as yes/no); an object,
// an array of objects (a table) and an array of primitives (badges) each get
// a section of their own. One level of nesting is rendered; anything deeper
// shows as raw JSON text.

export type Primitive = string | number | boolean | null

export type Section =
  | { kind: 'general'; rows: { key: string; value: string }[] }
  | { kind: 'object'; title: string; rows: { key: string; value: string }[] }
  | { kind: 'table'; title: string; columns: string[]; rows: string[][] }
  | { kind: 'badges'; title: string; values: string[] }

function isPrimitive(v: unknown): v is Primitive {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v)
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A value one level down: primitives as text, anything deeper as JSON. */
export function show(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'yes' : 'no'
  if (v === null || v === undefined) return '—'
  if (isPrimitive(v)) return String(v)
  return JSON.stringify(v)
}

/** The sections of a metadata object, in its key order, general first. */
export function sections(meta: Record<string, unknown> | null | undefined): Section[] {
  const general: { key: string; value: string }[] = []
  const out: Section[] = []
  for (const [key, v] of Object.entries(meta ?? {})) {
    if (isPrimitive(v)) {
      general.push({ key, value: show(v) })
    } else if (Array.isArray(v) && v.length > 0 && v.every(isPlainObject)) {
      const columns = [...new Set(v.flatMap((o) => Object.keys(o)))]
      out.push({ kind: 'table', title: key, columns, rows: v.map((o) => columns.map((c) => show(o[c]))) })
    } else if (Array.isArray(v) && v.every(isPrimitive)) {
      out.push({ kind: 'badges', title: key, values: v.map(show) })
    } else if (isPlainObject(v)) {
      out.push({ kind: 'object', title: key, rows: Object.entries(v).map(([k, x]) => ({ key: k, value: show(x) })) })
    } else {
      // A mixed array: shown as its JSON.
      general.push({ key, value: JSON.stringify(v) })
    }
  }
  return general.length > 0 ? [{ kind: 'general', rows: general }, ...out] : out
}
