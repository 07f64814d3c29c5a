import { describe, expect, it } from 'vitest'
import { describeScopes, scopeAllows, webhooksScopeAllows } from '#shared/utils/api-keys'

describe('the webhooks scope', () => {
  it('is granted by its own entry only, never by "*"', () => {
    expect(webhooksScopeAllows({ '*': 'write' }, 'read')).toBe(false)
    expect(webhooksScopeAllows({ webhooks: 'read' }, 'read')).toBe(true)
    expect(webhooksScopeAllows({ webhooks: 'read' }, 'write')).toBe(false)
    expect(webhooksScopeAllows({ 'webhooks': 'write', '*': 'read' }, 'write')).toBe(true)
  })

  it('grants no table', () => {
    expect(scopeAllows({ webhooks: 'write' }, 'tasks', 'read')).toBe(false)
  })

  it('is described apart from the tables', () => {
    expect(describeScopes({ 'webhooks': 'write', '*': 'read' })).toBe('All tables, read-only, webhook endpoints: read and write')
    expect(describeScopes({ tasks: 'write', webhooks: 'read' })).toBe('tasks: read and write, webhook endpoints: read')
    expect(describeScopes({ '*': 'write' })).toBe('All tables')
    expect(describeScopes({ webhooks: 'write' })).toBe('webhook endpoints: read and write')
  })
})
