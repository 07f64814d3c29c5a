// What the handlers (server/api, routes, plugins, middleware) use from webhooks/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { watchWebhookQueue } from './webhook-metrics'
export { apiKeyActorName, authApiWebhooks, subscribeWebhookEndpoint } from './webhook-subscriptions'
export { getWebhookSecret, listWebhookDeliveries, queueTestWebhook, resendWebhookDelivery, rotateWebhookSecret } from './webhooks'
export { createWebhookEndpoint, deleteWebhookEndpoint, disableEndpointsOfExpiredKeys, disableFailingEndpoints, getWebhookEndpoint, listWebhookEndpoints, queueEndpointTest, recoverWebhookEndpoint, subscribableEventTypes, updateWebhookEndpoint } from './webhooks-endpoints'
export { forgetLapsedHolds, startWebhookWorker, webhookSettings } from './webhooks-worker'
