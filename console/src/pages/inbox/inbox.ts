// What the inbox's pieces share: the message and contact types, the
// 24-hour service window, and how statuses read.
import type { components } from '@/api/client'

export type Contact = components['schemas']['ContactResp']
export type Message = components['schemas']['MessageResp']

/** Free-form messages may be sent this long after the contact's last message. */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000

/** When the contact's service window closes (null: it never opened). */
export function windowEnd(c: Pick<Contact, 'last_inbound_at'> | null): Date | null {
  if (!c?.last_inbound_at) return null
  return new Date(new Date(c.last_inbound_at).getTime() + SERVICE_WINDOW_MS)
}

/** Statuses move forward only: the rank of each. */
const rank: Record<string, number> = { pending: 0, sent: 1, delivered: 2, read: 3, failed: 4 }

/** The later of two statuses (an older event arriving late changes nothing). */
export function laterStatus(a: string, b: string): string {
  return (rank[b] ?? -1) > (rank[a] ?? -1) ? b : a
}

export const statusText: Record<string, string> = {
  pending: 'Sending',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  failed: 'Failed',
}

/** The upload kind of a file, as POST /api/media takes it. */
export function mediaKind(mime: string): 'image' | 'video' | 'audio' | 'document' {
  if (mime.startsWith('image/') && mime !== 'image/svg+xml') return 'image'
  if (mime.startsWith('video/')) return 'video'
  if (mime.startsWith('audio/')) return 'audio'
  return 'document'
}

/** A contact's name as the inbox shows it. */
export function displayName(c: { name?: string; profile_name?: string; phone_number: string }): string {
  return c.name || c.profile_name || c.phone_number
}

/**
 * How a message shows in the conversation list: the API's rule
 * (messaging.Preview) for messages that arrive through the event stream.
 */
export function previewOf(type: string, content: Record<string, unknown> | null): string {
  const str = (k: string) => (typeof content?.[k] === 'string' ? (content[k] as string) : '')
  let p: string
  if (type === 'text') p = str('text')
  else if (type === 'template') p = str('text') || '[template]'
  else p = `[${type}] ${str('caption') || str('body') || str('title')}`.trim()
  return [...p].slice(0, 100).join('')
}
