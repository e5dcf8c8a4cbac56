// Package campaigns holds the end-to-end tests of the campaign pipeline:
// the api, worker processes (killed and restarted), schedulers and the
// provider simulator, counting exactly what the provider received.
package campaigns
