// Package e2e holds end-to-end tests of the messaging core: the real api
// (router, middleware), real PostgreSQL and Redis, real asynq workers, and
// the provider simulator in-process, with its webhooks posted back to the
// api.
package e2e
