// English: every string of the console. One file per area; each area's keys
// live under its name (t('campaigns.title')). Message syntax: {name} is a
// value, "a | b" a plural, and a literal @ { } | $ is written {'@'} etc.
import calls from './calls'
import campaigns from './campaigns'
import common from './common'
import contacts from './contacts'
import home from './home'
import imports from './imports'
import inbox from './inbox'
import shell from './shell'
import transfers from './transfers'

export default {
  calls,
  campaigns,
  common,
  contacts,
  home,
  imports,
  inbox,
  shell,
  transfers,
}
