// Package vectors generates and checks counterkit's language-neutral test
// vectors (SPEC.md section 11): the JSON files under testdata/vectors, one
// per type package plus envelope.json, storage.json and the driver files.
// It holds tests only, so nothing imports it:
//
//	go test ./vectors -run TestVectors           # check every file
//	go test ./vectors -run TestVectors -update   # regenerate (review the diff)
//
// TestVectors runs a subtest per file and per named vector, so a failure
// names the vector and the first expectation that failed in it; the
// file's other vectors are still checked. A vector that makes the code
// panic is a failed vector, not a crash, for the files checked with a
// *checker (files_test.go). A file that is not JSON, or not of its kind,
// fails as a whole, with the line and column.
//
// A check replays each vector against this build's types: operations,
// merges, encodings, decodings and refusals, with the outcome, error kind
// and bytes the file gives. It also re-derives the expectations without
// the implementation: plain models written from the specification (a
// per-actor map for the G and PN counters, a map of accepted transactions
// for the transactional counters, a map of regular cells for the delta log,
// plain loops over big integers for the tally aggregates, with HyperLogLog
// registers computed from MetroHash64 directly, and "the sum of every
// normal row ever added" for balance), and refEnc, a small msgpack writer
// that shares no code with the codecs and rebuilds every expected encoding
// from the vector's structured state. So a file whose expectations merely
// mirror a bug of the implementation fails.
//
// TestVectorMutants (-mutants) and TestDriverVectorMutants
// (-driver-mutants) remove each listed SPEC rule from a copy of the module
// and require a vector to fail there.
package vectors
