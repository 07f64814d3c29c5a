import { describe, expect, it } from 'vitest'
import { capScopesByRole, roleTableAccess, roleWriteActions } from '#shared/utils/oauth'
import { redirectHost, redirectUriProblem, redirectUriRegistered } from '../../server/utils/oauth/redirect-uris'

describe('what a role may grant an agent', () => {
  it('gives every role that may write write: owners and admins create, update and delete, members create and update', () => {
    expect(roleTableAccess('owner', 'tasks')).toBe('write')
    expect(roleTableAccess('admin', 'tasks')).toBe('write')
    expect(roleTableAccess('member', 'tasks')).toBe('write')
    expect(roleTableAccess(null, 'tasks')).toBeNull()
    expect(roleWriteActions('admin', 'tasks')).toEqual(['create', 'update', 'delete'])
    expect(roleWriteActions('member', 'tasks')).toEqual(['create', 'update'])
    expect(roleWriteActions(null, 'tasks')).toEqual([])
  })

  it('caps a grant by the role it is verified with', () => {
    expect(capScopesByRole({ tasks: 'write', notes: 'read' }, 'admin')).toEqual({ tasks: 'write', notes: 'read' })
    expect(capScopesByRole({ tasks: 'write', notes: 'read' }, 'member')).toEqual({ tasks: 'write', notes: 'read' })
    expect(capScopesByRole({ tasks: 'write' }, null)).toEqual({})
  })
})

describe('redirect URIs', () => {
  it.each([
    'https://claude.ai/api/mcp/auth_callback',
    'http://127.0.0.1:33418/callback',
    'http://localhost:6274/oauth/callback',
    'http://[::1]:8080/cb',
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'com.example.agent:/oauth2redirect',
  ])('allows %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeNull()
  })

  it.each([
    ['http://agent.example.com/cb', /loopback/],
    ['http://192.168.1.10/cb', /loopback/],
    ['javascript:alert(1)', /not allowed/],
    ['data:text/html,hi', /not allowed/],
    ['file:///etc/passwd', /not allowed/],
    ['https://agent.example.com/cb#x', /fragment/],
    ['not a url', /not a URL/],
  ])('refuses %s', (uri, message) => {
    expect(redirectUriProblem(uri)).toMatch(message)
  })

  it('matches exactly, and shows the host (or the scheme) on the consent page', () => {
    expect(redirectUriRegistered('http://127.0.0.1:5000/cb', ['http://127.0.0.1:5000/cb'])).toBe(true)
    expect(redirectUriRegistered('http://127.0.0.1:5000/cb/', ['http://127.0.0.1:5000/cb'])).toBe(false)
    expect(redirectUriRegistered('https://claude.ai/cb?x=1', ['https://claude.ai/cb'])).toBe(false)
    expect(redirectHost('https://claude.ai/api/mcp/auth_callback')).toBe('claude.ai')
    expect(redirectHost('cursor://anysphere.cursor-mcp/oauth/callback')).toBe('cursor://anysphere.cursor-mcp')
    expect(redirectHost('com.example.agent:/cb')).toBe('com.example.agent:')
  })
})
