// Package archtest checks the layering rule of docs/ARCHITECTURE.md: which
// packages of the module may import which. Its test reads every package's
// imports with `go list -json ./...` and fails, naming the import, when one
// goes against the rule.
package archtest
