// Package bench holds the benchmarks behind docs/BENCHMARKS.md. They run the
// real system (api, worker, PostgreSQL, Redis, the provider simulator) and
// report throughput and latency percentiles as custom metrics; run them
// with `make bench`.
package bench
