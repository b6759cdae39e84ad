// Package modelcheck checks the promise of the ledger and the bounded
// account exhaustively on small scopes: every schedule of a few drivers'
// store calls, each call delivered, refused, acknowledged-and-lost, held
// and delivered late, served stale, failed with an unclassified error, or
// outlived by its caller's context, within a bound on faults and on
// preemptions. After every step a fresh reader with no faults checks the
// promise: every acknowledged transaction counted exactly once, none
// counted twice, none whose every call answered a definite failure
// counted at all, every key readable, no bounded value below its bound; a
// retry inside the ledger's retry window (Options.RetryWindow from the
// transaction's first call, on the checker's clock, which every ledger
// uses) recognised, neither applied again nor refused; after it, a timed
// transaction refused and an untimed one counted at most twice. Traces name
// a transaction record's key record(<txn>).
//
// design_rowledger_test.go checks, the same way but on an abstract model,
// the protocol of balance.Transactions (SPEC.md 9.4): a credit keyed by
// its transaction id, one record read and one row write.
// design_perwriter_test.go checks the planned per-writer layout of the
// ledger (a key per writer incarnation, a constant number of store calls
// per credit) the same way; its header says why it is not built as it
// stands (a credit's bytes grow with the rate).
//
// Its code is tests only; the explorer is in the mc_*_test.go files.
//
//	go test -race -v ./modelcheck                                   # CI scopes, with counts
//	COUNTERKIT_CASES=1 go test -v ./modelcheck                      # larger bounds
//	COUNTERKIT_HOLES=1 go test -race -run TestHoles -v ./modelcheck # known holes too
//	COUNTERKIT_MC_REPLAY='<scope>=<schedule>' go test -run 'Test.*/<scope>$' -v ./modelcheck
package modelcheck
