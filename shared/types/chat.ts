import type { UIMessage } from 'ai'
import type { CrudAction } from '../permissions'

/** Tokens a model call (or a whole answer) used. */
export interface TokenUsage {
  input: number
  output: number
}

/** Metadata of a stored chat message: what an assistant answer cost, and its write proposals as sentences. */
export interface ChatMessageMetadata {
  usage?: TokenUsage
  /** By tool call id: the proposed write as a sentence, with ids resolved to names when it was proposed. */
  proposals?: Record<string, WriteProposal>
}

/** A write the model proposed, as the person approving it reads it. */
export interface WriteProposal {
  sentence: string
  /** Names of the records the input refers to, by id. */
  names: Record<string, string>
}

export type ChatMessage = UIMessage<ChatMessageMetadata>

/** A chat in the list. */
export interface ChatSummary {
  id: string
  title: string
  created_at: string
  updated_at: string
}

/** GET /api/chats/{id}. */
export interface ChatDetail extends ChatSummary {
  messages: ChatMessage[]
  /** The sum of its answers' usage. */
  usage: TokenUsage
}

/** A tool's answer when it could not do its job (the model reads it and may try again). */
export interface ToolFailure {
  error: string
  [detail: string]: unknown
}

export interface QueryDatabaseInput {
  sql: string
}

/** What query_database answers: the rows as arrays, in the order of `columns`. */
export interface QueryDatabaseOutput {
  columns: string[]
  rows: unknown[][]
  row_count: number
  note?: string
}

/** What create_<table> and update_<table> answer. */
export interface WriteRecordOutput {
  record: Record<string, unknown> & { id: string }
}

/** What delete_<table> answers. */
export interface DeleteRecordOutput {
  deleted: string
}

export interface WebSearchInput {
  query: string
}

export interface WebSearchOutput {
  results: { title?: string, url?: string, snippet?: string }[]
}

/** What a write tool does: a table action other than view. */
export type WriteAction = Exclude<CrudAction, 'view'>
