// Package modelcheck checks the promise of the ledger and the bounded
// account exhaustively on small scopes: every schedule of a few drivers'
// store calls, each call delivered, refused, acknowledged-and-lost, held
// and delivered late, served stale, failed with an unclassified error, or
// outlived by its caller's context. Its code is tests only; the explorer
// lives in internal/mc.
package modelcheck
