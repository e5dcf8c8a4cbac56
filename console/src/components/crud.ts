// The list / form dialog / confirm-delete pattern of the console's simple
// resource pages (canned responses, custom actions, …): the page keeps its
// own fields and API calls; these hold the state around them and the order
// of things (clear the errors, disable the buttons, close on success, load
// the list again, put a refusal next to its field or report it).
import { ref, type Ref } from 'vue'
import { fieldErrors, type FieldErrors } from '@/components/fielderror'
import { reportError } from '@/stores/notices'

/**
 * A form dialog that creates a row (editing null) or changes one. `submit`
 * runs the page's request; on success the dialog closes and the list is
 * loaded again; a refusal goes under the field its message names (`rules`),
 * else under the form.
 */
export function useFormDialog<T, F extends string>(reload: () => Promise<void>, rules: [F, RegExp][]) {
  const open = ref(false)
  const editing = ref(null) as Ref<T | null>
  const errors = ref<FieldErrors<F>>({})
  const busy = ref(false)

  /** Opens the dialog on a row (null: a new one); `fill` sets the page's fields. */
  function start(row: T | null, fill: (row: T | null) => void): void {
    editing.value = row
    fill(row)
    errors.value = {}
    open.value = true
  }

  async function submit(run: (editing: T | null) => Promise<void>): Promise<void> {
    errors.value = {}
    busy.value = true
    try {
      await run(editing.value)
      open.value = false
      await reload()
    } catch (e) {
      errors.value = fieldErrors<F>(e, rules)
    } finally {
      busy.value = false
    }
  }

  return { open, editing, errors, busy, start, submit }
}

/**
 * Delete after a confirmation: `deleting` is the row asked about (its dialog
 * is open while it is set); `confirm` deletes it, closes the dialog and loads
 * the list again, or reports the refusal with `failed()` (read then, in the
 * current language).
 */
export function useConfirmDelete<T>(reload: () => Promise<void>, run: (row: T) => Promise<void>, failed: () => string) {
  const deleting = ref(null) as Ref<T | null>
  const busy = ref(false)

  async function confirm(): Promise<void> {
    const row = deleting.value
    if (!row) return
    busy.value = true
    try {
      await run(row)
      deleting.value = null
      await reload()
    } catch (e) {
      reportError(e, failed())
    } finally {
      busy.value = false
    }
  }

  return { deleting, busy, confirm }
}
