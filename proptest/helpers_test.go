package proptest_test

import "github.com/leanovate/gopter"

func gopterParams(seed int64) *gopter.GenParameters {
	p := gopter.DefaultGenParameters()
	return p.CloneWithSeed(seed)
}
