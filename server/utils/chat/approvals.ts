import type { UIMessage } from 'ai'
import { createError } from 'h3'

type ToolPart = Extract<UIMessage['parts'][number], { toolCallId: string }>

export interface ApprovalAnswer {
  id: string
  approved: boolean
  reason?: string
}

/** The tool calls of an assistant message that wait for the user's approval. */
export function pendingApprovals(message: UIMessage | undefined): ToolPart[] {
  return (message?.role === 'assistant' ? message.parts : [])
    .filter((part): part is ToolPart => 'toolCallId' in part && part.state === 'approval-requested')
}

const approvalIdOf = (part: ToolPart) => (part as { approval: { id: string } }).approval.id

/** A new message leaves the pending writes unapproved: they are recorded as denied. Answers whether any were. */
export function denyPending(message: UIMessage | undefined): boolean {
  const pending = pendingApprovals(message)
  for (const part of pending) {
    Object.assign(part, { state: 'output-denied', approval: { id: approvalIdOf(part), approved: false, reason: 'The user moved on without approving' } })
  }
  return pending.length > 0
}

/**
 * Records the user's answers on the pending tool calls of the stored last answer: 409 for an
 * answer that names no pending call of it (forged, or already answered), 400 while any stays unanswered.
 */
export function applyApprovals(message: UIMessage | undefined, answers: ApprovalAnswer[]): void {
  const pending = pendingApprovals(message)
  for (const answer of answers) {
    const part = pending.find(p => approvalIdOf(p) === answer.id)
    if (!part) throw createError({ statusCode: 409, statusMessage: `No pending approval ${answer.id} in this chat` })
    Object.assign(part, { state: 'approval-responded', approval: { id: answer.id, approved: answer.approved, ...(answer.reason ? { reason: answer.reason } : {}) } })
  }
  if (pendingApprovals(message).length) throw createError({ statusCode: 400, statusMessage: 'Answer every pending approval of the last answer' })
}
