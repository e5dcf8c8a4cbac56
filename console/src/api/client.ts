// The typed API client and its envelope wrapper.
//
// `api` is openapi-fetch over the types openapi-typescript generates from
// openapi.json (the document the api serves, kept current by a Go test), so
// vue-tsc fails the build when a call no longer matches the API. `call`
// unwraps the {status, data} envelope, turns {status: 'error', message}
// into an ApiError carrying the API's message, renews the access token once
// on a 401, and waits out a 429 (Retry-After, else X-RateLimit-Reset) while
// telling the user how long.
import createClient from 'openapi-fetch'
import type { paths } from './schema'
import { t } from '@/i18n'

export type { components, paths } from './schema'

/** An API answer that is not a success: its status and the API's message. */
export class ApiError extends Error {
  readonly status: number
  /** Seconds to wait before trying again (429 only). */
  readonly retryAfter?: number

  constructor(message: string, status: number, retryAfter?: number) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.retryAfter = retryAfter
  }
}

/** What the session and notices give the client (set once by main.ts). */
export interface ClientHooks {
  /** The access token, null when signed out. */
  token(): string | null
  /**
   * Renews the access token; false when the session is over. reason is the
   * API's message of the 401 that made the renewal necessary.
   */
  renew(reason?: string): Promise<boolean>
  /** Shows that a request waits `seconds` for the rate limit, and waits. */
  wait(seconds: number, message: string): Promise<void>
}

let hooks: ClientHooks = {
  token: () => null,
  renew: async () => false,
  wait: (seconds) => sleep(seconds * 1000),
}

/** Connects the client to the session store and the notices. */
export function configureClient(h: ClientHooks): void {
  hooks = h
}

export const api = createClient<paths>({ baseUrl: '' })

api.use({
  onRequest({ request }) {
    const token = hooks.token()
    if (token && !request.headers.has('Authorization')) {
      request.headers.set('Authorization', `Bearer ${token}`)
    }
    return request
  },
})

/** Longest rate-limit wait that is waited out; longer ones are errors. */
export const MAX_AUTO_WAIT_SECONDS = 60

type Answer<D> = { data?: D; error?: unknown; response: Response }
type DataOf<D> = D extends { data: infer T } ? T : never

export interface CallOptions {
  /** Do not renew the token on a 401 (sign-in, refresh itself). */
  noRenew?: boolean
  /** Longest 429 wait to wait out; 0 gives every 429 back at once. */
  maxWait?: number
}

/**
 * Sends a request (a function, so that it can be sent again) and returns
 * the envelope's data, or throws ApiError with the API's message.
 */
export async function call<D>(send: () => Promise<Answer<D>>, opts: CallOptions = {}): Promise<DataOf<D>> {
  const maxWait = opts.maxWait ?? MAX_AUTO_WAIT_SECONDS
  let renewed = opts.noRenew ?? false
  for (let attempt = 0; ; attempt++) {
    let answer: Answer<D>
    try {
      answer = await send()
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') throw e
      throw new ApiError(t('shell.client.unreachable'), 0)
    }
    const { data, error, response } = answer
    if (response.ok) {
      return (data as { data: DataOf<D> }).data
    }
    const message = messageOf(error, response)
    if (response.status === 401 && !renewed) {
      renewed = true
      if (await hooks.renew(message)) continue
    }
    if (response.status === 429) {
      const wait = retryAfter(response)
      if (wait <= maxWait && attempt < 3) {
        await hooks.wait(wait, message)
        continue
      }
      throw new ApiError(message, 429, wait)
    }
    throw new ApiError(message, response.status)
  }
}

/**
 * fetch with the access token, renewing it once on a 401: for what the
 * typed client does not read (server-sent events, file downloads).
 */
export async function authorizedFetch(input: string, init: RequestInit = {}): Promise<Response> {
  const send = () => {
    const headers = new Headers(init.headers)
    const token = hooks.token()
    if (token) headers.set('Authorization', `Bearer ${token}`)
    return fetch(input, { ...init, headers })
  }
  const res = await send()
  if (res.status === 401 && (await hooks.renew(t('shell.client.answeredTo', { status: '401', path: String(input) })))) return send()
  return res
}

/** The API's message of an error answer. */
function messageOf(error: unknown, response: Response): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string' && error.message) {
    return error.message
  }
  return t('shell.client.answered', { status: `${response.status} ${response.statusText}`.trim() })
}

/** Seconds a 429 asks to wait: Retry-After, else until X-RateLimit-Reset. */
export function retryAfter(response: Response): number {
  const ra = response.headers.get('Retry-After')
  if (ra) {
    const secs = Number(ra)
    if (Number.isFinite(secs)) return Math.max(1, Math.ceil(secs))
    const at = Date.parse(ra)
    if (!Number.isNaN(at)) return Math.max(1, Math.ceil((at - Date.now()) / 1000))
  }
  const reset = Number(response.headers.get('X-RateLimit-Reset'))
  if (reset > 0) return Math.max(1, Math.ceil(reset - Date.now() / 1000))
  return 1
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(t)
      resolve()
    })
  })
}
