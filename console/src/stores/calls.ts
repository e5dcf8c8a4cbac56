// The calls store: the calls ringing for this user and the one call this
// browser carries. Ringing follows the live events (call.ringing for a call
// waiting for me or my team, as the server scopes them; call.answered and
// call.ended take it away) and GET /api/call-transfers after a gap. A call
// is answered with a RTCPeerConnection on the ICE servers of
// GET /api/calls/ice-servers and the browser's microphone: the complete
// offer (candidates gathered; the bridge takes no trickle) goes to the
// connect endpoint, its answer comes back, and the remote audio plays in the
// panel's <audio> element (docs/CALLING.md).
import { reactive, shallowRef, watch } from 'vue'
import { api, call, sleep } from '@/api/client'
import { t } from '@/i18n'
import { listen, type EventOf } from './live'
import { can, session } from './session'

export interface Ringing {
  transferId: string
  callLogId: string
  /** The caller's number, masked as the lists mask it. */
  who: string
  teamId: string | null
}

export type CallState = 'connecting' | 'calling' | 'connected' | 'on_hold'

export interface ActiveCall {
  direction: 'incoming' | 'outgoing'
  callLogId: string
  /** The transfer this agent connected to (incoming calls). */
  transferId: string | null
  who: string
  state: CallState
  since: number
  muted: boolean
}

export const calls = reactive({
  ringing: [] as Ringing[],
  active: null as ActiveCall | null,
  /** What the last call ended with, shown until dismissed or the next call. */
  ended: '',
  /** The last refusal or failure, with the API's or the browser's words. */
  error: '',
  busy: false,
})

/** The remote audio, for the panel's <audio> element. */
export const remoteStream = shallowRef<MediaStream | null>(null)

let pc: RTCPeerConnection | null = null
let mic: MediaStream | null = null

// Signing out or switching organization drops this browser's side of a
// call (the server ends it when its leg goes quiet or the caller hangs up).
watch([() => session.token !== null, () => session.org?.id], ([signedIn], [, oldOrg]) => {
  if (!signedIn || session.org?.id !== oldOrg) {
    myTeams = null
    release()
    calls.active = null
    calls.ringing = []
  }
})

/** Whether this user takes or places calls (who GET /api/calls/ice-servers answers). */
export function takesCalls(): boolean {
  return can('call_transfers:write') || can('outgoing_calls:write')
}

function message(e: unknown): string {
  if (e instanceof DOMException && e.name === 'NotAllowedError') return t('calls.store.micNotAllowed')
  if (e instanceof DOMException && e.name === 'NotFoundError') return t('calls.store.noMic')
  return e instanceof Error ? e.message : String(e)
}

function ring(r: Ringing): void {
  if (calls.active?.callLogId === r.callLogId) return
  calls.ringing = [...calls.ringing.filter((x) => x.callLogId !== r.callLogId), r]
}

function stopRinging(callLogId: string): void {
  calls.ringing = calls.ringing.filter((x) => x.callLogId !== callLogId)
}

function onEvent(e: EventOf<'call.ringing' | 'call.answered' | 'call.ended'>): void {
  const d = e.data
  if (e.type === 'call.ringing') {
    // A call the team's strategy gave to another agent is theirs to take.
    if (d.call_transfer_id && (!d.agent_id || d.agent_id === session.me?.id)) {
      ring({ transferId: d.call_transfer_id, callLogId: d.call_log_id, who: e.contact?.name || e.contact?.phone_number || t('calls.store.unknownCaller'), teamId: d.team_id })
    }
    return
  }
  stopRinging(d.call_log_id)
  if (e.type === 'call.answered' && calls.active?.callLogId === d.call_log_id && calls.active.state === 'calling') {
    calls.active.state = 'connected'
    calls.active.since = Date.now()
  }
  if (e.type === 'call.ended' && calls.active?.callLogId === d.call_log_id) {
    finish(t('calls.store.endedWith', { who: calls.active.who }))
  }
}

/**
 * The teams whose calls this user may take, when the list says it (an
 * agent's GET /api/teams is their own teams); null for supervisors
 * (transfers:assign: any call) and for users whose list is every team.
 */
let myTeams: Set<string> | null = null

/**
 * Whether a waiting call is this user's to take, by the rule the server
 * applies to call.ringing: the agent it was given to; else anyone for a call
 * without a team; a team's call, its members and supervisors.
 */
function mayTake(teamId: string | null | undefined, agentId: string | null | undefined): boolean {
  if (agentId) return agentId === session.me?.id
  return !teamId || can('transfers:assign') || (myTeams?.has(teamId) ?? false)
}

/** The waiting calls, read again after a gap in the stream. */
async function resync(): Promise<void> {
  if (!can('call_transfers:read')) return
  if (myTeams === null && !can('transfers:assign') && can('teams:read') && !can('teams:update')) {
    myTeams = new Set(((await call(() => api.GET('/api/teams'))).teams ?? []).map((t) => t.id))
  }
  const out = await call(() => api.GET('/api/call-transfers', { params: { query: { status: 'waiting', limit: 50 } } }))
  // The list has every waiting call of the organization; the panel rings
  // only for those the server would have rung this user for.
  calls.ringing = (out.call_transfers ?? [])
    .filter((t) => mayTake(t.team_id, t.agent_id) && t.call_log_id !== calls.active?.callLogId)
    .map((t) => ({ transferId: t.id, callLogId: t.call_log_id, who: t.caller_phone, teamId: t.team_id ?? null }))
}

/** Starts following the calls; returns the function that stops. */
export function followCalls(): () => void {
  const stop = listen(['call.ringing', 'call.answered', 'call.ended'], onEvent, resync)
  void resync().catch(() => {})
  return stop
}

/** Waits until the offer has its candidates, at most ms (what is there then is sent). */
function gathered(conn: RTCPeerConnection, ms: number): Promise<void> {
  if (conn.iceGatheringState === 'complete') return Promise.resolve()
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      conn.removeEventListener('icegatheringstatechange', check)
      resolve()
    }
    const check = (): void => {
      if (conn.iceGatheringState === 'complete') done()
    }
    const timer = setTimeout(done, ms)
    conn.addEventListener('icegatheringstatechange', check)
  })
}

/** A peer connection with the microphone, and its complete offer. */
async function prepare(): Promise<string> {
  const ice = await call(() => api.GET('/api/calls/ice-servers'))
  mic = await navigator.mediaDevices.getUserMedia({ audio: true, video: false })
  const conn = new RTCPeerConnection({
    iceServers: (ice.ice_servers ?? []).map((s) => ({ urls: s.urls ?? [], username: s.username || undefined, credential: s.credential || undefined })),
  })
  pc = conn
  for (const track of mic.getAudioTracks()) conn.addTrack(track, mic)
  conn.ontrack = (ev) => {
    remoteStream.value = ev.streams[0] ?? new MediaStream([ev.track])
  }
  conn.onconnectionstatechange = () => {
    if (pc === conn && conn.connectionState === 'failed' && calls.active) finish(t('calls.store.audioFailed'))
  }
  await conn.setLocalDescription(await conn.createOffer())
  await gathered(conn, 2000)
  return conn.localDescription?.sdp ?? ''
}

/** Closes this browser's side of the call. */
function release(): void {
  pc?.close()
  pc = null
  mic?.getTracks().forEach((t) => t.stop())
  mic = null
  remoteStream.value = null
}

function finish(ended: string): void {
  release()
  calls.active = null
  calls.ended = ended
}

async function guarded(f: () => Promise<void>): Promise<void> {
  calls.busy = true
  calls.error = ''
  try {
    await f()
  } catch (e) {
    calls.error = message(e)
  } finally {
    calls.busy = false
  }
}

/** Takes a ringing call in this browser. */
export function answer(r: Ringing): Promise<void> {
  return guarded(async () => {
    if (calls.active) throw new Error(t('calls.store.hangUpFirst'))
    calls.ended = ''
    calls.active = { direction: 'incoming', callLogId: r.callLogId, transferId: r.transferId, who: r.who, state: 'connecting', since: Date.now(), muted: false }
    stopRinging(r.callLogId)
    try {
      const offer = await prepare()
      const out = await call(() => api.POST('/api/call-transfers/{id}/connect', { params: { path: { id: r.transferId } }, body: { sdp_offer: offer } }))
      await pc?.setRemoteDescription({ type: 'answer', sdp: out.sdp_answer })
      if (calls.active) {
        calls.active.state = 'connected'
        calls.active.since = Date.now()
      }
    } catch (e) {
      release()
      calls.active = null
      throw e
    }
  })
}

/** Calls a contact from an account (the contact must have given permission). */
export function callContact(contactId: string, account: string, who: string): Promise<void> {
  return guarded(async () => {
    if (calls.active) throw new Error(t('calls.store.hangUpFirst'))
    calls.ended = ''
    calls.active = { direction: 'outgoing', callLogId: '', transferId: null, who, state: 'connecting', since: Date.now(), muted: false }
    try {
      const offer = await prepare()
      const out = await call(() => api.POST('/api/calls/outgoing', { body: { contact_id: contactId, platform_account: account, sdp_offer: offer } }))
      await pc?.setRemoteDescription({ type: 'answer', sdp: out.sdp_answer })
      if (calls.active) {
        calls.active.callLogId = out.call_log_id
        calls.active.state = 'calling'
        void followOutgoing(out.call_log_id)
      }
    } catch (e) {
      release()
      calls.active = null
      throw e
    }
  })
}

/** Outgoing calls send no call.answered: their log says when the callee picks up or declines. */
const OUTGOING_POLL_MS = 1500
const finalStatuses = new Set(['completed', 'missed', 'rejected', 'failed'])

async function followOutgoing(callLogId: string): Promise<void> {
  if (!can('call_logs:read')) return
  while (calls.active?.callLogId === callLogId && calls.active.state === 'calling') {
    await sleep(OUTGOING_POLL_MS)
    let status: string
    try {
      status = (await call(() => api.GET('/api/call-logs/{id}', { params: { path: { id: callLogId } } }))).call_log.status
    } catch {
      continue
    }
    const a = calls.active
    if (a?.callLogId !== callLogId) return
    if (finalStatuses.has(status)) {
      finish(
        t(status === 'rejected' ? 'calls.store.declined' : status === 'missed' ? 'calls.store.noAnswer' : 'calls.store.endedTo', { who: a.who }),
      )
    } else if (status === 'accepted' || status === 'connected') {
      a.state = 'connected'
      a.since = Date.now()
    }
  }
}

export function hold(): Promise<void> {
  return guarded(async () => {
    const a = calls.active
    if (!a) return
    await call(() => api.POST('/api/call-logs/{id}/hold', { params: { path: { id: a.callLogId } } }))
    a.state = 'on_hold'
  })
}

export function resume(): Promise<void> {
  return guarded(async () => {
    const a = calls.active
    if (!a) return
    await call(() => api.POST('/api/call-logs/{id}/resume', { params: { path: { id: a.callLogId } } }))
    a.state = 'connected'
  })
}

/** Mutes or unmutes the microphone; the caller hears silence meanwhile. */
export function setMuted(muted: boolean): void {
  if (!calls.active) return
  mic?.getAudioTracks().forEach((t) => (t.enabled = !muted))
  calls.active.muted = muted
}

/** Passes the call to a team: this browser leaves it, the caller hears ringback. */
export function transferTo(teamId: string, teamName: string): Promise<void> {
  return guarded(async () => {
    const a = calls.active
    if (!a) return
    await call(() => api.POST('/api/call-transfers/initiate', { body: { call_log_id: a.callLogId, team_id: teamId } }))
    finish(t('calls.store.passed', { who: a.who, team: teamName }))
  })
}

export function hangUp(): Promise<void> {
  return guarded(async () => {
    const a = calls.active
    if (!a) return
    if (a.direction === 'incoming' && a.transferId) {
      await call(() => api.POST('/api/call-transfers/{id}/hangup', { params: { path: { id: a.transferId! } } }))
    } else if (a.callLogId) {
      await call(() => api.POST('/api/calls/outgoing/{id}/hangup', { params: { path: { id: a.callLogId } } }))
    }
    finish(t('calls.store.youHungUp', { who: a.who }))
  })
}
