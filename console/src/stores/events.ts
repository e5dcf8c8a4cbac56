// Live updates: server-sent events read with fetch (EventSource cannot send
// the Authorization header), reconnected with back-off, and polling at a
// gentle rate when the stream cannot be had.
//
// Built against the campaign progress stream
// (GET /api/campaigns/{id}/progress/stream, event "progress", whose data is
// a ProgressResp; GET /api/campaigns/{id}/progress answers the same once):
//
//   const feed = live({
//     url: `/api/campaigns/${id}/progress/stream`,
//     event: 'progress',
//     poll: () => call(() => api.GET('/api/campaigns/{id}/progress', { params: { path: { id } } })),
//     onData: (p) => (progress.value = p),
//     done: (p) => p.status === 'completed' || p.status === 'cancelled',
//   })
//   onUnmounted(feed.stop)
import { ref, type Ref } from 'vue'
import { authorizedFetch, sleep } from '@/api/client'

export type LiveState = 'connecting' | 'streaming' | 'polling' | 'stopped'

export interface LiveOptions<T> {
  /** The event stream's URL. */
  url: string
  /** The name of the events whose data (JSON) is a T; others are ignored. */
  event: string
  /** Reads the same value once: used while the stream cannot be. */
  poll: () => Promise<T>
  onData: (data: T) => void
  /** A value after which nothing changes any more: the feed stops. */
  done?: (data: T) => boolean
  /** A poll failed (the stream's own failures are retried quietly). */
  onError?: (e: unknown) => void
  /** Seconds between polls (default 5). */
  pollSeconds?: number
}

export interface Live {
  state: Ref<LiveState>
  stop(): void
}

/** Failed stream attempts in a row before polling takes over for a while. */
const STREAM_TRIES = 3
/** How long polling lasts before the stream is tried again. */
const POLL_SPELL_MS = 60_000

export function live<T>(o: LiveOptions<T>): Live {
  const state = ref<LiveState>('connecting')
  const abort = new AbortController()
  const signal = abort.signal
  const stop = () => {
    state.value = 'stopped'
    abort.abort()
  }
  const deliver = (data: T): boolean => {
    o.onData(data)
    if (o.done?.(data)) {
      stop()
      return true
    }
    return false
  }

  void (async () => {
    let failures = 0
    while (!signal.aborted) {
      state.value = 'connecting'
      let received = false
      try {
        const res = await authorizedFetch(o.url, { headers: { Accept: 'text/event-stream' }, cache: 'no-store', signal })
        const type = res.headers.get('Content-Type') ?? ''
        if (res.ok && res.body && type.startsWith('text/event-stream')) {
          state.value = 'streaming'
          for await (const ev of readEvents(res.body)) {
            if (ev.event !== o.event) continue
            received = true
            if (deliver(JSON.parse(ev.data) as T)) return
          }
        } else {
          // A refusal (403, 404...) will not pass on a retry: poll, which
          // reports the API's message through onError.
          failures = STREAM_TRIES
        }
      } catch {
        if (signal.aborted) return
      }
      // A stream that delivered and then ended was closed by the server
      // (idle or time limit): reconnect soon. Otherwise back off.
      failures = received ? 0 : failures + 1
      if (failures >= STREAM_TRIES) {
        if (await pollSpell()) return
        failures = 0
        continue
      }
      await sleep(received ? 1000 : Math.min(30_000, 1000 * 2 ** failures), signal)
    }
  })()

  /** Polls for a while; true when the feed is over. */
  async function pollSpell(): Promise<boolean> {
    state.value = 'polling'
    const until = Date.now() + POLL_SPELL_MS
    while (!signal.aborted && Date.now() < until) {
      try {
        if (deliver(await o.poll())) return true
      } catch (e) {
        o.onError?.(e)
      }
      await sleep((o.pollSeconds ?? 5) * 1000, signal)
    }
    return signal.aborted
  }

  return { state, stop }
}

export interface ServerEvent {
  event: string
  data: string
  id?: string
}

/**
 * Parses a text/event-stream body into its events (the WHATWG format:
 * "field: value" lines, an empty line ends an event, data lines join with
 * newlines, the event name defaults to "message").
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
          continue
        }
        if (line.startsWith(':')) continue // a comment (keep-alive)
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
