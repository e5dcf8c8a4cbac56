// Files the API answers (CSV exports): fetched with the access token, which
// a plain link cannot carry, and handed to the browser's downloads under
// the name the API gives (Content-Disposition).
import { ApiError, authorizedFetch } from './client'
import { t } from '@/i18n'

/** Fetches a file and saves it; throws ApiError with the API's message. */
export async function downloadFile(url: string, init: RequestInit = {}, fallbackName = 'export.csv'): Promise<string> {
  let res: Response
  try {
    res = await authorizedFetch(url, init)
  } catch {
    throw new ApiError(t('shell.client.unreachable'), 0)
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { message?: string } | null
    throw new ApiError(body?.message ?? t('shell.client.answered', { status: String(res.status) }), res.status)
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? fallbackName
  const blob = await res.blob()
  const href = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = href
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(href), 10_000)
  return name
}
