/** Where a change came from: the web app, the public API, the chat, an MCP agent, or the system. */
export type ChangeSource = 'web' | 'api' | 'chat' | 'mcp' | 'system'

/**
 * One record event of the change feed: the same `type` and `data` as the webhook payloads (the
 * record's columns; an update adds `previous`, the old values of the columns it changed), with who
 * made the change and from where. `id` is an opaque string; ids sort in the feed's order.
 */
export interface ChangeEvent {
  id: string
  /** `<table>.created`, `<table>.updated` or `<table>.deleted`. */
  type: string
  created_at: string
  data: Record<string, unknown> & { previous?: Record<string, unknown> }
  actor_id: string | null
  source: ChangeSource
}
