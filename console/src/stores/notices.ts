// Toasts: short notices at the corner of the screen (ToastList shows them).
import { reactive } from 'vue'
import { ApiError, sleep } from '@/api/client'
import { tick } from '@/stores/clock'
import { session } from '@/stores/session'

export type NoticeKind = 'info' | 'success' | 'error' | 'wait'

export interface Notice {
  id: number
  kind: NoticeKind
  text: string
  /** For 'wait' notices: when the wait ends (ms since the epoch). */
  until?: number
}

export const notices = reactive<{ list: Notice[] }>({ list: [] })
let nextId = 1

/** Shows a notice; it goes away after `ms` (0: when dismissed). */
export function notify(text: string, kind: NoticeKind = 'info', ms = 6000): number {
  const id = nextId++
  notices.list.push({ id, kind, text })
  if (ms > 0) setTimeout(() => dismiss(id), ms)
  return id
}

export function dismiss(id: number): void {
  const i = notices.list.findIndex((n) => n.id === id)
  if (i >= 0) notices.list.splice(i, 1)
}

/**
 * Shows that a request waits for the rate limit, with a countdown, and
 * resolves when the wait is over.
 */
export async function waitOut(seconds: number, message: string): Promise<void> {
  const id = nextId++
  tick()
  notices.list.push({ id, kind: 'wait', text: message, until: Date.now() + seconds * 1000 })
  await sleep(seconds * 1000)
  dismiss(id)
}

/**
 * Shows why an action failed: the API's message. Nothing when the session
 * has just ended: the shell's dialog says why.
 */
export function reportError(e: unknown, fallback: string): void {
  if (session.ended !== null) return
  notify(e instanceof ApiError ? e.message : fallback, 'error')
}
