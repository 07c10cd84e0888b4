// Package hostile is the hostile-input suite: it builds the wukongd
// binary, starts `wukongd serve` as a real process and attacks it the way
// issue #13 did — nesting, huge and invalid text, entity bombs, clients
// that never read or that dribble their body, expensive queries, other
// clients' cancels — checking for each probe its status, that it answered
// within a bound of its deadline, that the server's RSS stayed under a
// bound and that the server still answers.
//
// `go test ./internal/hostile` (CI) runs each probe once against the
// embedded default dataset. `make test-hostile` adds -long: LUBM-1 from
// the shared datasets, every probe again with many concurrent attackers,
// and the RSS budget of the issue (2 GB).
package hostile
