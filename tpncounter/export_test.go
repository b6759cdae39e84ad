package tpncounter

// variant names a known-broken variant of the rules (mutants.go), for the
// tests that show the simulation catches each of them. Only correctVariant
// is available without the counterkit_mutants build tag.
type variant uint8

const (
	correctVariant variant = iota
	variantCountEveryCopy
	variantForgetOnFold
	variantDeferredShrinksWindow
	variantRetireShared
	variantMergeKeepsFolded
	variantLaterRetirementWins
)

// dropEncodings forgets every entry's cached encoding, so that the next
// MarshalBinary encodes c from scratch.
func dropEncodings(c *Counter) {
	for _, g := range [2]*GCounter{&c.p, &c.n} {
		for _, e := range g.entries {
			e.enc = nil
		}
	}
}
