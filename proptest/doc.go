// Package proptest is counterkit's shared property-test toolkit: one
// description of a CRDT (a Model) and two checkers, CheckLaws and
// CheckConvergence, that every counter package runs against its types. It
// is built on gopter and is meant for _test.go files only.
//
// A Model gives the checkers the type's New, Apply, Merge, Clone, Equal and
// Value, a generator of operations, and Expect: a plain reference model
// that says what Value must be after exactly a given set of accepted
// operations. Every observed Value is compared with Expect, so a type
// cannot pass by being consistently wrong.
//
// Both checkers run random schedules (GenSchedule): at least three replicas
// applying ops (some repeated verbatim, as retries) and sending snapshots
// that are delivered late, twice or never. Each actor applies its own ops
// serially, so every state checked is reachable. Simulate checks every step
// (values, rejected ops, Merge's source, Leq); then CheckLaws checks the
// join-semilattice laws on the final states and two sent snapshots, and
// CheckConvergence runs full gossip (see RunLaws and RunConvergence).
//
// A failure is shrunk and reported with the broken law, the states, the
// smallest schedule, the seed and the command that replays it (Replay).
// RunLaws and RunConvergence return a Result instead of failing, so a test
// can require that a broken type is caught; LawsProp and ConvergenceProp
// are gopter properties. README.md covers budgets (COUNTERKIT_CASES) and
// Models for types with windows or conflicts.
package proptest
