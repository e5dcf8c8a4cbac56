// The live-event store: one GET /api/events stream per tab (server-sent
// events read with fetch, since EventSource cannot send the Authorization
// header), shared by every page that listens. It reconnects with back-off
// and Last-Event-ID (the server replays what a short gap missed), reloads
// the listeners' data when the server says the gap was too long (reset), and
// falls back to gentle polling (each listener's resync) while the stream
// cannot be had. It stops when the last listener leaves or the user signs
// out, and starts over (without a position) when the organization changes.
//
//   const stop = listen(['campaign.progress'], (e) => { if (e.data.id === id) show(e.data) }, reload)
//   onUnmounted(stop)
import { ref, watch } from 'vue'
import { authorizedFetch, sleep } from '@/api/client'
import { session } from './session'

// The events (docs/API.md, Live events). Numbers and names are in contact,
// masked by the server as the lists mask them.
export interface LiveContact {
  id: string
  phone_number: string
  name: string
  /** Absent when the event does not say (calls) or nobody is assigned. */
  assigned_to?: string
}
export interface MessageData {
  message_id: string
  contact_id: string
  direction: 'incoming' | 'outgoing'
  type: string
  status: string
  content: Record<string, unknown> | null
  occurred_at: string
}
export interface StatusData {
  message_id: string
  contact_id: string
  status: string
}
export interface AssignmentData {
  contact_id: string
  assigned_to: string | null
  previous: string | null
}
export interface ReadData {
  contact_id: string
  /** Incoming messages still unread after the conversation was marked read. */
  unread_count: number
}
export interface TransferData {
  transfer_id: string
  status: 'active' | 'resumed'
  source: string
  contact_id: string
  team_id: string | null
  team_name?: string
  notes: string
  agent_id: string | null
  agent_name?: string
}
export interface CallData {
  call_log_id: string
  call_transfer_id: string | null
  status: string
  team_id: string | null
  agent_id: string | null
}
/** GET /api/campaigns/{id}/progress without sends_per_second. */
export interface CampaignProgressData {
  id: string
  status: string
  total: number
  pending: number
  sending: number
  sent: number
  delivered: number
  read: number
  failed: number
  unknown: number
  /** Opted out of marketing: not sent on purpose. */
  skipped: number
  started_at: string | null
  completed_at: string | null
}
export interface ImportData {
  job_id: string
  table: 'contacts' | 'tags'
  status: 'queued' | 'running' | 'done' | 'failed'
  total_rows: number
  processed_rows: number
}

interface Base<T extends string, D> {
  id: string
  type: T
  at: string
  contact?: LiveContact
  data: D
}
export type LiveEvent =
  | Base<'message.created', MessageData>
  | Base<'message.status', StatusData>
  | Base<'contact.assigned', AssignmentData>
  | Base<'contact.read', ReadData>
  | Base<'transfer.created' | 'transfer.assigned' | 'transfer.resumed', TransferData>
  | Base<'call.ringing' | 'call.answered' | 'call.ended', CallData>
  | Base<'campaign.progress', CampaignProgressData>
  | Base<'import.progress', ImportData>
export type LiveType = LiveEvent['type']
export type EventOf<T extends LiveType> = Extract<LiveEvent, { type: T }>

export type LiveState = 'idle' | 'connecting' | 'streaming' | 'polling'
/** What the stream is doing, for a page that says so. */
export const liveState = ref<LiveState>('idle')

interface Listener {
  types: ReadonlySet<string>
  on: (e: LiveEvent) => void
  resync?: () => unknown
}
const listeners = new Set<Listener>()

/**
 * Calls on with each event of the given types the user may see. resync
 * reloads what the page shows: it runs when the server could not replay a
 * gap, and every POLL_SECONDS while the stream cannot be had. Returns the
 * function that stops listening.
 */
export function listen<T extends LiveType>(types: T[], on: (e: EventOf<T>) => void, resync?: () => unknown): () => void {
  const l: Listener = { types: new Set(types), on: on as (e: LiveEvent) => void, resync }
  listeners.add(l)
  ensure()
  return () => {
    listeners.delete(l)
    if (listeners.size === 0) halt()
  }
}

/** Failed stream attempts in a row before polling takes over for a while. */
const STREAM_TRIES = 3
/** How long polling lasts before the stream is tried again. */
const POLL_SPELL_MS = 60_000
/** Seconds between polls: gentle on the 100-a-minute rate limit. */
const POLL_SECONDS = 10

let abort: AbortController | null = null
/** The last event's position, sent as Last-Event-ID on a reconnect. */
let lastId = ''

function ensure(): void {
  if (!abort && listeners.size > 0 && session.token) void run()
}

function halt(): void {
  abort?.abort()
  abort = null
  liveState.value = 'idle'
}

// Signing out ends the stream; another organization starts a new one.
watch(
  () => session.token !== null,
  (signedIn) => (signedIn ? ensure() : halt()),
)
watch(
  () => session.org?.id,
  () => {
    lastId = ''
    halt()
    ensure()
  },
)

async function resyncAll(): Promise<void> {
  await Promise.allSettled([...listeners].map(async (l) => l.resync?.()))
}

function dispatch(type: string, data: string): void {
  let e: LiveEvent
  try {
    e = JSON.parse(data) as LiveEvent
  } catch {
    return
  }
  for (const l of listeners) {
    if (!l.types.has(type)) continue
    try {
      l.on(e)
    } catch (err) {
      console.error('a live-event listener failed', err)
    }
  }
}

async function run(): Promise<void> {
  const ctl = new AbortController()
  abort = ctl
  const signal = ctl.signal
  let failures = 0
  while (!signal.aborted) {
    liveState.value = 'connecting'
    let streamed = false
    let refused = false
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' }
      if (lastId) headers['Last-Event-ID'] = lastId
      const res = await authorizedFetch('/api/events', { headers, cache: 'no-store', signal })
      if (res.ok && res.body && (res.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
        streamed = true
        liveState.value = 'streaming'
        for await (const ev of readEvents(res.body)) {
          // end: the token expired or the stream fell behind; the next
          // request renews the token and replays from lastId.
          if (ev.event === 'end') break
          if (ev.event === 'reset') {
            await resyncAll()
            continue
          }
          if (ev.id) lastId = ev.id
          dispatch(ev.event, ev.data)
        }
      } else {
        // 429 (this user's streams are all in use, other tabs), 403, 503:
        // polling serves until the next try.
        refused = true
        void res.body?.cancel()
      }
    } catch {
      if (signal.aborted) return
    }
    failures = streamed ? 0 : failures + 1
    if (refused || failures >= STREAM_TRIES) {
      await pollSpell(signal)
      failures = 0
      continue
    }
    // A stream that ended is reconnected soon; failures back off (with
    // jitter, so that the tabs of a restarted server do not come back at once).
    const wait = streamed ? 500 : Math.min(30_000, 1000 * 2 ** failures)
    await sleep(wait * (0.75 + Math.random() / 2), signal)
  }
}

async function pollSpell(signal: AbortSignal): Promise<void> {
  liveState.value = 'polling'
  const until = Date.now() + POLL_SPELL_MS
  while (!signal.aborted && Date.now() < until) {
    await resyncAll()
    await sleep(POLL_SECONDS * 1000, signal)
  }
}

export interface ServerEvent {
  event: string
  data: string
  id?: string
}

/**
 * Parses a text/event-stream body into its events (the WHATWG format:
 * "field: value" lines, an empty line ends an event, data lines join with
 * newlines, the event name defaults to "message", comments are skipped).
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buf = ''
  let event = ''
  let data: string[] = []
  let id: string | undefined
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buf += decoder.decode(value, { stream: true })
      let nl: number
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        if (nl === buf.length - 1 && buf[nl] === '\r') break // maybe the first half of \r\n
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1))
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id }
          event = ''
          data = []
          id = undefined
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        let v = colon < 0 ? '' : line.slice(colon + 1)
        if (v.startsWith(' ')) v = v.slice(1)
        if (field === 'event') event = v
        else if (field === 'data') data.push(v)
        else if (field === 'id') id = v
      }
    }
  } finally {
    reader.releaseLock()
  }
}
