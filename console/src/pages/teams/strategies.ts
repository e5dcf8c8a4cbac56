// The assignment strategies a team may have (internal/teams.Strategies),
// with what each does, for the teams pages.
export const strategies = [
  { value: 'round_robin', label: 'Round robin', hint: 'Each transfer goes to the next available member in turn.' },
  { value: 'load_balanced', label: 'Load balanced', hint: 'Each transfer goes to the available member with the fewest open ones.' },
  { value: 'manual', label: 'Manual', hint: 'Transfers wait in the team queue until someone takes or assigns them.' },
]

export function strategyLabel(value: string): string {
  return strategies.find((s) => s.value === value)?.label ?? value
}
