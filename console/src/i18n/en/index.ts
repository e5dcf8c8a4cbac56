// English: every string of the console. One file per area; each area's keys
// live under its name (t('campaigns.title')). Message syntax: {name} is a
// value, "a | b" a plural, and a literal @ { } | $ is written {'@'} etc.
import campaigns from './campaigns'
import common from './common'
import home from './home'
import imports from './imports'
import shell from './shell'

export default {
  campaigns,
  common,
  home,
  imports,
  shell,
}
