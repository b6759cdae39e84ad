// Package proptest is counterkit's shared property-test toolkit: one
// description of a CRDT (a Model) and two checkers, CheckLaws and
// CheckConvergence, that every counter package runs against its types. It
// is built on gopter and is meant for _test.go files only.
//
// # Basics
//
// A Model gives the checkers the type's New, Apply, Merge, Clone, Equal and
// Value, a gopter generator of operations, and Expect: a plain reference
// model that says what Value must be after exactly a given set of accepted
// operations (a sum, a map from transaction id to amount, ...). Besides the
// algebraic laws, which compare states of the type with each other, every
// observed Value is compared with Expect, so a type cannot pass by being
// consistently wrong.
//
// Both checkers run random schedules. A schedule (GenSchedule) has at least
// three replicas, replica i acting as Actor(i) ("r0", "r1", ...), and a
// sequence of steps: a replica applies an op (one in five repeats an
// earlier op verbatim, as a retry or as the same transaction reaching a
// second actor); a replica's snapshot is put in flight; an in-flight
// snapshot is delivered (merged) into a replica; or one is lost.
// Snapshots stay in flight after delivery, so they arrive twice and arrive
// after newer ones; the generator aims a quarter of deliveries at each of
// those cases on purpose. Every state the checkers look at is therefore
// reachable: each actor applies its own ops serially, as counterkit's types
// require, and no state mixes two divergent histories of one actor.
//
// While a schedule runs (Simulate), after every step:
//
//   - Value(s) == Expect(ops in s's causal history), for every replica and
//     for every snapshot when it is delivered;
//   - an Apply that returns an error leaves the state unchanged;
//   - Merge returns no error and never modifies its source (a copy taken
//     at send time is compared, which also catches a shallow Clone);
//   - with Model.Leq: Apply is inflationary and Merge is an upper bound.
//
// CheckLaws then takes the final replica states and two sent snapshots and
// checks the join-semilattice laws on them: Clone is Equal, a⊔a = a, a⊔∅ =
// ∅⊔a = a, a⊔b = b⊔a with Value(a⊔b) == Expect(history(a) ∪ history(b)),
// (a⊔b)⊔c = a⊔(b⊔c) for every triple, and, with Leq, a ≤ a⊔b, Leq
// reflexive, and a ≤ b implying a⊔b = b. "Equal" here means Model.Equal and
// equal Values.
//
// CheckConvergence then runs full gossip: each replica merges the
// pre-gossip snapshot of every other replica (replica i in the order i+1,
// i+2, ... mod n). All replicas must be Equal, have Value == Expect(all
// accepted ops), and stay unchanged when they merge each other again.
//
// A failure is shrunk (steps are removed while some law still breaks) and
// reported as the broken law, the states involved, the smallest schedule
// found, the seed, and the command that replays it. RunLaws and
// RunConvergence return a Result instead of failing a test, so a test can
// require that a deliberately broken type is caught; LawsProp and
// ConvergenceProp expose the same checks as gopter properties.
//
// # Budgets, replay and scaling
//
// DefaultOptions: 1000 cases, 3 replicas, at most 40 ops and MaxSteps(40) =
// 120 steps per schedule, schedule length growing with gopter's size from
// short to long over the run. Both checkers on a map-based counter take
// well under a second under -race; a heavier type can lower cfg.Cases.
//
// The seed is always logged. To replay a failure, run the printed command:
//
//	COUNTERKIT_SEED=<seed> go test ./<pkg> -run '^<TestName>$'
//
// The same seed gives the same schedules, the same failure and the same
// shrunk counterexample. To scale every randomised test in the module,
// set COUNTERKIT_CASES to a multiplier:
//
//	COUNTERKIT_CASES=20 go test -race ./...   # a long local run
//
// Scale applies the same multiplier to simulations built outside this
// package.
//
// # Caveats
//
//   - Operations must be self-consistent: if two accepted ops can make
//     Merge fail (one transaction id with two amounts on two replicas),
//     the checkers report a merge-error failure. Derive conflicting fields
//     from the id in GenOp, or test conflicts separately.
//   - Expect receives every accepted op, including repeats applied by two
//     actors. A type that promises exactly-once needs an Expect that
//     deduplicates by transaction id; for a type without ids a repeat is
//     just another increment and Expect counts it again.
//   - Types with windows or garbage collection (state dropped after some
//     time or history length) need an Expect that knows the window, or a
//     schedule short enough (cfg.MaxOps) to stay inside it.
//   - Values are compared with reflect.DeepEqual: Value and Expect must
//     return the same dynamic type (int64 and int differ).
//   - Model functions must be deterministic, or replays will not
//     reproduce. Seed 0 in Options means "from the environment or the
//     clock".
package proptest
