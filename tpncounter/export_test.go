package tpncounter

// variant names a known-broken variant of the rules (see broken), for the
// tests that show the simulation catches each of them.
type variant uint8

const (
	correctVariant variant = iota
	variantCountEveryCopy
	variantForgetOnFold
	variantDeferredShrinksWindow
)

// breakRules switches on variant v of the rules for every counter of the
// process (correctVariant: none) and returns a function that switches it
// off again. Tests using it must not run in parallel with other tests of
// the package.
func breakRules(v variant) (restore func()) {
	broken.countEveryCopy = v == variantCountEveryCopy
	broken.forgetOnFold = v == variantForgetOnFold
	broken.deferredShrinksWindow = v == variantDeferredShrinksWindow
	return func() { broken.countEveryCopy, broken.forgetOnFold, broken.deferredShrinksWindow = false, false, false }
}
