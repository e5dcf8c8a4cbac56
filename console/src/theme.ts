// Light, dark or the system's choice, remembered in this browser.
import { ref, watch } from 'vue'

export type Theme = 'system' | 'light' | 'dark'
const KEY = 'wharf-theme'

function stored(): Theme {
  try {
    const v = localStorage.getItem(KEY)
    return v === 'light' || v === 'dark' ? v : 'system'
  } catch {
    return 'system'
  }
}

export const theme = ref<Theme>(stored())

function apply(t: Theme): void {
  if (t === 'system') delete document.documentElement.dataset.theme
  else document.documentElement.dataset.theme = t
}

apply(theme.value)
watch(theme, (t) => {
  apply(t)
  try {
    if (t === 'system') localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, t)
  } catch {
    // storage disabled: the choice lasts for this page only
  }
})
