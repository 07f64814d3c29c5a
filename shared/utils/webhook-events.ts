/** Event types every team can subscribe to, besides the record events of its tables. */
export const invitationEventTypes = ['invitation.created', 'invitation.accepted', 'invitation.revoked'] as const

/** Every event type an endpoint may subscribe to: the invitation events and `<table>.created|updated|deleted` of each domain table. */
export function webhookEventTypes(tableNames: readonly string[]): string[] {
  const recordEvents = [...tableNames].sort().flatMap(table => [`${table}.created`, `${table}.updated`, `${table}.deleted`])
  return [...invitationEventTypes, ...recordEvents]
}
