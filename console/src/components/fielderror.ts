// Puts an API refusal next to its cause: the API's validation messages name
// the field they are about first ("config.url: ...", "price must be ...",
// "Canned response with this shortcut already exists"), so a form gives a
// list of patterns per field and shows the message under the first field
// that matches, or under the form when none does.
export type FieldErrors<K extends string> = Partial<Record<K | 'form', string>>

export function fieldErrors<K extends string>(e: unknown, rules: [K, RegExp][]): FieldErrors<K> {
  const message = e instanceof Error ? e.message : String(e)
  for (const [key, re] of rules) {
    if (re.test(message)) return { [key]: message } as FieldErrors<K>
  }
  return { form: message } as FieldErrors<K>
}
