// Spanish: the shell and the campaign pages; every other area falls back to
// English. Each area given here must have every key English has (vue-tsc
// checks it through `satisfies`).
import type en from '../en'
import campaigns from './campaigns'
import common from './common'
import home from './home'
import shell from './shell'

export default {
  campaigns,
  common,
  home,
  shell,
} satisfies Partial<typeof en>
