// Shared types of PagedTable and the URL-kept list state of list pages.
import { computed, ref, watch, type ComputedRef, type Ref } from 'vue'
import { useRoute, useRouter } from 'vue-router'

export interface Column {
  key: string
  label: string
  /** Numbers align right. */
  numeric?: boolean
}

type QueryValues = Record<string, string | number>

/**
 * A list page's state kept in the URL's query (page, limit, filters), so
 * that a list can be linked and reloaded. Values equal to their default are
 * left out of the URL; changing anything but `page` goes back to page 1.
 *
 *   const q = useQueryState({ page: 1, limit: 20, status: '' })
 *   api.GET('/api/campaigns', { params: { query: q.state.value } })
 *   q.update({ status: 'sending' })
 */
export function useQueryState<T extends QueryValues>(defaults: T): { state: ComputedRef<T>; update: (patch: Partial<T>) => void } {
  const route = useRoute()
  const router = useRouter()
  const state = computed(() => {
    const out: QueryValues = { ...defaults }
    for (const key of Object.keys(defaults)) {
      const raw = route.query[key]
      const v = Array.isArray(raw) ? raw[0] : raw
      if (v === null || v === undefined || v === '') continue
      if (typeof defaults[key] === 'number') {
        const n = Number(v)
        if (Number.isInteger(n) && n > 0) out[key] = n
      } else {
        out[key] = v
      }
    }
    return out as T
  })
  function update(patch: Partial<T>): void {
    const next = { ...route.query }
    for (const [key, v] of Object.entries(patch)) {
      if (v === undefined || v === '' || v === defaults[key]) delete next[key]
      else next[key] = String(v)
    }
    if (!('page' in patch)) delete next.page
    void router.replace({ query: next })
  }
  return { state, update }
}

/**
 * The text of a list's search box, kept in the URL's `search` after 300 ms
 * without typing (one request per pause, not per key):
 *
 *   const q = useQueryState({ page: 1, limit: 20, search: '' })
 *   const search = useSearchInput(q)   // <input v-model="search">
 */
export function useSearchInput<T extends QueryValues & { search: string }>(q: {
  state: ComputedRef<T>
  update: (patch: Partial<T>) => void
}): Ref<string> {
  const text = ref(q.state.value.search)
  let typing: ReturnType<typeof setTimeout> | undefined
  watch(text, (v) => {
    clearTimeout(typing)
    typing = setTimeout(() => q.update({ search: v.trim() } as Partial<T>), 300)
  })
  return text
}

/**
 * Keeps a list's answers in order: a filter changed while the previous load
 * is still on its way must not be overwritten by that older answer.
 *
 *   const latest = useLatest()
 *   async function load() {
 *     const current = latest()
 *     const out = await call(...)
 *     if (!current()) return // a newer load was started meanwhile
 *     rows.value = out.items
 *   }
 */
export function useLatest(): () => () => boolean {
  let n = 0
  return () => {
    const mine = ++n
    return () => mine === n
  }
}
