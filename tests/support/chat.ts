import { randomUUID } from 'node:crypto'
import type { Client } from './http'

/** A chat turn as the browser reads it: the answer's status and the chunks of its UI message stream. */
export interface ChatTurn {
  status: number
  chunks: any[]
  /** The assistant's text: the text deltas joined. */
  text: string
  /** Whether the stream ended properly: a finish chunk, then [DONE]. */
  finished: boolean
}

/** The body of a turn that sends `text` as the user's new message. */
export function userMessage(text: string) {
  return { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] } }
}

/** Posts a turn to a chat and reads the whole UI message stream (the request returns only once the stream has ended). */
export async function postTurn(client: Client, chatId: string, body: unknown): Promise<ChatTurn> {
  const answer = await client.post(`/api/chats/${chatId}`, body)
  const raw = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)
  const lines = raw.split('\n').filter(line => line.startsWith('data: '))
  const chunks = lines.filter(line => line !== 'data: [DONE]').map(line => JSON.parse(line.slice(6)))
  return {
    status: answer.status,
    chunks,
    text: chunks.filter(c => c.type === 'text-delta').map(c => c.delta).join(''),
    finished: lines.includes('data: [DONE]') && chunks.some(c => c.type === 'finish'),
  }
}
