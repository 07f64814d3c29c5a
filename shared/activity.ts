// The activity log's names, without the validation library: the browser's pages import them from
// here, so that a page that only shows the activity does not load the schemas (shared/utils/schemas.ts
// re-exports them for the server).

export const activitySources = ['web', 'api', 'chat', 'mcp', 'system'] as const
export const activityActions = ['insert', 'update', 'delete'] as const
export type ActivitySource = typeof activitySources[number]
export type ActivityAction = typeof activityActions[number]
