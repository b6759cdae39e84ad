//go:build counterkit_mutants

package ledger

// Group-commit variants for BreakGroup.
const (
	GroupCorrect     = ""
	GroupAckEarly    = "acknowledges members before the write lands"
	GroupDropOnRetry = "drops members from a retried write"
	GroupKeepRefused = "keeps refused members in the state"
)

// BreakGroup switches on the broken group-commit variant v for every Ledger
// of the process and returns a function that switches it off again. Tests
// using it must not run in parallel with other tests of the package.
func BreakGroup(v string) (restore func()) {
	brokenAckEarly = v == GroupAckEarly
	brokenDropOnRetry = v == GroupDropOnRetry
	brokenKeepRefused = v == GroupKeepRefused
	return func() { brokenAckEarly, brokenDropOnRetry, brokenKeepRefused = false, false, false }
}

// BreakDating makes every Ledger date an idle writer by the records of
// its newest credit and debit it finds, even when one is missing, and
// returns a function that switches it off again.
func BreakDating() (restore func()) {
	brokenDateByAnyRecord = true
	return func() { brokenDateByAnyRecord = false }
}

// BreakLongDoubt makes every Ledger send a copy in doubt for RetireAfter/2
// again beside another writer's copy, and name it in a retirement pass's
// records, and returns a function that switches it off again.
func BreakLongDoubt() (restore func()) {
	brokenLongDoubt = true
	return func() { brokenLongDoubt = false }
}

// BreakLongDoubtOwn makes every Ledger take a copy in doubt for
// RetireAfter/2 out by its records even when it would count beside the
// copies the store holds, and returns a function that switches it off
// again.
func BreakLongDoubtOwn() (restore func()) {
	brokenLongDoubtOwn = true
	return func() { brokenLongDoubtOwn = false }
}

// BreakRetirement makes every Ledger of the process retire idle writers
// without recording their transactions, and returns a function that
// switches it off again.
func BreakRetirement() (restore func()) {
	brokenRetireUnrecorded = true
	return func() { brokenRetireUnrecorded = false }
}

// Late-copy retirement variants for BreakLate.
const (
	LateDeclined = "declines a writer holding a late copy"
	LateAll      = "leaves every copy a writer alone holds out"
)

// BreakLate switches on the broken variant v of the pass's retirement of
// a writer holding late copies for every Ledger of the process, and
// returns a function that switches it off again.
func BreakLate(v string) (restore func()) {
	brokenLateDeclined, brokenLateAll = v == LateDeclined, v == LateAll
	return func() { brokenLateDeclined, brokenLateAll = false, false }
}
