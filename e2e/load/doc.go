// Package load holds end-to-end tests whose assertions are rates: many
// campaigns sharing one worker process. They are built without the race
// detector (whose slowdown would measure the detector, not the product), so
// `make test` runs this package in a second, race-free step.
package load
