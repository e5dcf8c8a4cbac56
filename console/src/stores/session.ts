// The session: who is signed in, in which organization, with which
// permissions (GET /api/me), and the access token.
//
// The access token lives in memory only. The refresh token is an HttpOnly
// cookie the api sets (docs/API.md, "The console's session cookie"), which
// JavaScript never sees: a reload restores the session by refreshing with
// it. A refresh spends the cookie's token, and a spent token presented
// again revokes the whole session, so tabs take turns: one refresh at a time
// across tabs, under navigator.locks. Tabs tell one another when the user
// signs in, out or switches organization (BroadcastChannel).
import { reactive } from 'vue'
import { api, ApiError, call, type components } from '@/api/client'

export type Me = components['schemas']['MeResp']
export type Membership = components['schemas']['MembershipResp']
export type CurrentOrg = components['schemas']['CurrentOrgResp']

interface SessionState {
  /** restoring: the page just loaded and the cookie is being tried. */
  status: 'restoring' | 'signed-in' | 'signed-out'
  token: string | null
  me: Me | null
  orgs: Membership[]
  org: CurrentOrg | null
  /** Why a session that was open ended (a refresh was refused), for the dialog that says so. */
  ended: string | null
}

export const session = reactive<SessionState>({
  status: 'restoring',
  token: null,
  me: null,
  orgs: [],
  org: null,
  ended: null,
})

/** Whether the user holds a permission key (`resource:action`). */
export function can(permission: string): boolean {
  return session.me?.permissions?.includes(permission) ?? false
}

/** Whether the user is a super admin (the job monitor). */
export function isSuperAdmin(): boolean {
  return session.me?.is_super_admin ?? false
}

/** What a page, a link or a button needs of the user. */
export interface Requirement {
  permission?: string
  /** Any one of these permissions (a page of several jobs). */
  anyOf?: string[]
  superAdmin?: boolean
}

export function allows(r: Requirement): boolean {
  if (r.superAdmin && !isSuperAdmin()) return false
  if (r.permission && !can(r.permission)) return false
  if (r.anyOf && !r.anyOf.some(can)) return false
  return true
}

const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel('wharf-session')
type Message = { type: 'signed-in' | 'signed-out' | 'switched' }

function tell(type: Message['type']): void {
  channel?.postMessage({ type } satisfies Message)
}

let renewTimer: ReturnType<typeof setTimeout> | undefined

function setToken(token: string, expiresIn: number): void {
  session.token = token
  clearTimeout(renewTimer)
  // Renew ahead of expiry; a request that meets a 401 renews at once anyway.
  renewTimer = setTimeout(() => void renew(), Math.max(10, expiresIn * 0.8) * 1000)
}

function clear(): void {
  clearTimeout(renewTimer)
  session.token = null
  session.me = null
  session.orgs = []
  session.org = null
  session.status = 'signed-out'
}

/** Loads the profile, the memberships and the current organization. */
export async function loadProfile(): Promise<void> {
  const [me, mine, org] = await Promise.all([
    call(() => api.GET('/api/me')),
    call(() => api.GET('/api/me/organizations')),
    call(() => api.GET('/api/organizations/current')),
  ])
  session.me = me
  session.orgs = mine.organizations ?? []
  session.org = org
  session.status = 'signed-in'
  session.ended = null
}

/** Signs in; throws ApiError with the API's message on failure. */
export async function signIn(email: string, password: string): Promise<void> {
  // No automatic rate-limit wait: the sign-in page shows it beside the form.
  const s = await call(() => api.POST('/api/auth/login', { body: { email, password, cookie: true } }), {
    noRenew: true,
    maxWait: 0,
  })
  setToken(s.access_token, s.expires_in)
  await loadProfile()
  tell('signed-in')
}

let renewing: Promise<boolean> | null = null
let refusal: string | undefined

/**
 * Trades the cookie for a new access token (and a new cookie); false when
 * the session is over. One at a time in this tab, and across tabs. reason
 * is why a request was refused, which says more than the refresh's own
 * refusal when the session cannot go on ("user account is disabled").
 */
export function renew(reason?: string): Promise<boolean> {
  refusal ??= reason
  renewing ??= withLock(refreshOnce).finally(() => {
    renewing = null
    refusal = undefined
  })
  return renewing
}

async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  // navigator.locks exists in secure contexts (HTTPS, localhost); served
  // over plain HTTP elsewhere, tabs are not coordinated.
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined
  return locks ? await locks.request('wharf-session-refresh', fn) : fn()
}

async function refreshOnce(): Promise<boolean> {
  try {
    const t = await call(() => api.POST('/api/auth/refresh', { body: {} }), { noRenew: true })
    setToken(t.access_token, t.expires_in)
    return true
  } catch (e) {
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      end(refusal ?? e.message)
      return false
    }
    throw e
  }
}

/**
 * The session ended without the user signing out (a refresh was refused):
 * an open shell stays behind a dialog that says why (acknowledgeEnd).
 */
function end(reason: string): void {
  if (session.status !== 'signed-in') {
    clear()
    return
  }
  clearTimeout(renewTimer)
  session.token = null
  session.ended = reason
  session.status = 'signed-out'
}

/** The user read why the session ended: forget it. */
export function acknowledgeEnd(): void {
  clear()
  session.ended = null
}

let restoring: Promise<void> | null = null

/** Resolves once the page's first restore (below) is over. */
export function ready(): Promise<void> {
  return (restoring ??= restore())
}

/** Restores the session of the cookie when the page loads. */
export async function restore(): Promise<void> {
  try {
    if (await renew()) await loadProfile()
  } catch {
    clear()
  }
  if (session.status === 'restoring') session.status = 'signed-out'
}

/** Signs out: the api revokes the session and clears the cookie. */
export async function signOut(): Promise<void> {
  try {
    await call(() => api.POST('/api/auth/logout', { body: {} }), { noRenew: true })
  } finally {
    clear()
    session.ended = null
    tell('signed-out')
  }
}

/** Moves the session to another of the user's organizations. */
export async function switchOrg(organizationId: string): Promise<void> {
  const s = await call(() => api.POST('/api/auth/switch-org', { body: { organization_id: organizationId, cookie: true } }))
  setToken(s.access_token, s.expires_in)
  await loadProfile()
  tell('switched')
}

/** Sets whether the user takes chats. */
export async function setAvailable(available: boolean): Promise<void> {
  const me = session.me
  if (!me) return
  const u = await call(() =>
    api.PUT('/api/users/{id}/availability', { params: { path: { id: me.id } }, body: { is_available: available } }),
  )
  me.is_available = u.is_available
}

channel?.addEventListener('message', (ev: MessageEvent<Message>) => {
  switch (ev.data.type) {
    case 'signed-out':
      clear()
      break
    case 'signed-in':
    case 'switched':
      // The cookie now holds another session: take a token of it.
      void restore()
      break
  }
})
