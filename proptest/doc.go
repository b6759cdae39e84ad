// Package proptest is counterkit's shared property-test toolkit, built on
// gopter and meant for _test.go files only: one description of a CRDT (a
// Model) and two checkers, CheckLaws and CheckConvergence, that every
// counter package runs against its types.
//
// Every observed Value is compared with the Model's Expect, a plain
// reference model, so a type cannot pass by being consistently wrong. The
// checkers run random schedules (GenSchedule) of at least three replicas
// whose snapshots arrive late, twice or never; each actor applies its own
// ops serially, so every state checked is reachable. They check every step
// (Simulate), then the join-semilattice laws (RunLaws) or full gossip
// (RunConvergence). A failure is shrunk and reported with the broken law,
// the smallest schedule, the seed and the command that replays it
// (Replay). RunLaws and RunConvergence return a Result instead of failing,
// so a test can require that a broken type is caught; LawsProp and
// ConvergenceProp are gopter properties. README.md covers budgets
// (COUNTERKIT_CASES) and Models for types with windows or conflicts.
package proptest
