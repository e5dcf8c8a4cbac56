// The document framework's resource API (/api/resource, /api/method) for the
// document pages. Its answers are Frappe's, not the core envelope: {data} or
// {message}, and errors as {exc_type, exception, _server_messages}. They go
// through the typed client and `call` (token renewal, 429 waits); the
// error's message is read from _server_messages.
import { api, call } from '@/api/client'
import { t } from '@/i18n'

/** What the caller may do with a DocType's documents (wharf.desk.get_doctypes). */
export interface Rights {
  read: number
  write: number
  create: number
  delete: number
  submit: number
  cancel: number
}

export interface DeskDoctype {
  name: string
  module: string
  custom: number
  is_submittable: number
  title_field?: string
  rights: Rights
}

export interface DocField {
  fieldname: string
  label?: string
  fieldtype: string
  options?: string
  reqd: number
  default?: string
  in_list_view: number
  hidden: number
  read_only: number
  description?: string
}

export interface DocTypeDef {
  name: string
  module: string
  is_submittable: number
  istable: number
  autoname: string
  title_field?: string
  description?: string
  fields: DocField[]
}

export type Doc = Record<string, unknown> & { name: string; docstatus: number; modified: string }

/** A list filter as the API takes it: [field, operator, value]. */
export type Filter = [string, string, string]

type Answer = { data?: unknown; error?: unknown; response: Response }

/** The message of a Frappe error answer: the first of _server_messages, else the exception's text. */
export function frappeMessage(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined
  const e = error as { _server_messages?: unknown; exception?: unknown }
  if (typeof e._server_messages === 'string') {
    try {
      const list = JSON.parse(e._server_messages) as string[]
      const first = JSON.parse(list[0] ?? '{}') as { message?: unknown }
      if (typeof first.message === 'string' && first.message) return first.message
    } catch {
      /* fall through to the exception */
    }
  }
  if (typeof e.exception === 'string') return e.exception.replace(/^frappe\.exceptions\.\w+: /, '')
  return undefined
}

/** Sends a resource API request through `call` and answers its body. */
async function frappe<T>(send: () => Promise<Answer>): Promise<T> {
  const body = await call(async () => {
    const a = await send()
    const message = a.error === undefined ? undefined : frappeMessage(a.error)
    return { data: a.data === undefined ? undefined : { data: a.data }, error: message ? { message } : a.error, response: a.response }
  })
  return body as T
}

const layoutTypes = new Set(['Section Break', 'Column Break', 'Tab Break', 'HTML', 'Heading']) // i18n-ok: Frappe field types

/** Whether a field holds a value (not layout, not a table). */
export function isValueField(f: DocField): boolean {
  return !layoutTypes.has(f.fieldtype) && f.fieldtype !== 'Table'
}

/** A field's label for people: its label, else its name made readable. */
export function fieldLabel(f: DocField): string {
  if (f.label) return f.label
  const s = f.fieldname.replace(/_/g, ' ')
  return s.charAt(0).toUpperCase() + s.slice(1)
}

/** A document's status (0 draft, 1 submitted, 2 cancelled), in the catalog's words. */
export const docstatuses = [0, 1, 2] as const
const docstatusKeys = ['documents.docstatus.draft', 'documents.docstatus.submitted', 'documents.docstatus.cancelled'] as const

/** The status's word; undefined for a status the framework does not have. Read it inside a render. */
export function docstatusLabel(n: number): string | undefined {
  const key = docstatusKeys[n]
  return key ? t(key) : undefined
}


export async function deskDoctypes(): Promise<DeskDoctype[]> {
  const out = await frappe<{ message?: DeskDoctype[] }>(() => api.GET('/api/method/{method}', { params: { path: { method: 'wharf.desk.get_doctypes' } } }))
  return out.message ?? []
}

export async function getDocType(name: string): Promise<DocTypeDef> {
  const out = await frappe<{ data: DocTypeDef }>(() => api.GET('/api/resource/{doctype}/{name}', { params: { path: { doctype: 'DocType', name } } }))
  return out.data
}

export interface ListQuery {
  fields: string[]
  filters: Filter[]
  limit: number
  offset: number
}

export async function listDocs(doctype: string, q: ListQuery): Promise<Doc[]> {
  const out = await frappe<{ data: Doc[] }>(() =>
    api.GET('/api/resource/{doctype}', {
      params: {
        path: { doctype },
        query: {
          fields: JSON.stringify(q.fields),
          filters: q.filters.length ? JSON.stringify(q.filters) : undefined,
          order_by: 'modified desc',
          limit: String(q.limit),
          offset: String(q.offset),
        },
      },
    }),
  )
  return out.data ?? []
}

export async function countDocs(doctype: string, filters: Filter[]): Promise<number> {
  const out = await frappe<{ message?: number }>(() =>
    api.GET('/api/method/{method}', {
      params: { path: { method: 'frappe.client.get_count' }, query: { doctype, filters: JSON.stringify(filters) } as never },
    }),
  )
  return out.message ?? 0
}

export async function getDoc(doctype: string, name: string): Promise<Doc> {
  return (await frappe<{ data: Doc }>(() => api.GET('/api/resource/{doctype}/{name}', { params: { path: { doctype, name } } }))).data
}

// The resource API takes any object of the DocType's fields: its OpenAPI
// document does not describe the body (docBody), hence the casts.
export async function insertDoc(doctype: string, fields: Record<string, unknown>): Promise<Doc> {
  return (await frappe<{ data: Doc }>(() => api.POST('/api/resource/{doctype}', { params: { path: { doctype } }, body: fields as never }))).data
}

export async function updateDoc(doctype: string, name: string, fields: Record<string, unknown>): Promise<Doc> {
  return (await frappe<{ data: Doc }>(() => api.PUT('/api/resource/{doctype}/{name}', { params: { path: { doctype, name } }, body: fields as never }))).data
}

export async function submitDoc(doctype: string, name: string): Promise<Doc> {
  return (await frappe<{ data: Doc }>(() => api.POST('/api/resource/{doctype}/{name}/submit', { params: { path: { doctype, name } } }))).data
}

export async function cancelDoc(doctype: string, name: string): Promise<Doc> {
  return (await frappe<{ data: Doc }>(() => api.POST('/api/resource/{doctype}/{name}/cancel', { params: { path: { doctype, name } } }))).data
}

export async function deleteDoc(doctype: string, name: string): Promise<void> {
  await frappe(() => api.DELETE('/api/resource/{doctype}/{name}', { params: { path: { doctype, name } } }))
}

/**
 * The field an error message is about, so that it shows next to it: the
 * field whose name (or label) the message names first. Frappe's messages
 * name fields as "Label (fieldname)", hooks' by fieldname ("recipients row
 * 2: mobile_number ..."). undefined: the message is about the document.
 */
export function fieldOf(message: string, fields: DocField[]): string | undefined {
  let best: { at: number; field: string } | undefined
  for (const f of fields) {
    if (layoutTypes.has(f.fieldtype)) continue
    const names = [f.fieldname]
    if (f.label) names.push(f.label)
    for (const n of names) {
      const re = new RegExp(`(^|[^A-Za-z0-9_])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`)
      const m = re.exec(message)
      if (m && (!best || m.index < best.at)) best = { at: m.index, field: f.fieldname }
    }
  }
  return best?.field
}
