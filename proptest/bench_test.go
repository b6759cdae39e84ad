package proptest_test

import (
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"

	"github.com/counterkit/counterkit/proptest"
)

// BenchmarkCheck measures the cost of one random case of each checker on
// the test-only counter and ledger, so packages can budget cfg.Cases.
func BenchmarkCheck(b *testing.B) {
	const cases = 100
	cfg := proptest.Options{Cases: cases, Seed: 1}
	run := map[string]func() (proptest.Result, error){
		"laws/counter":        func() (proptest.Result, error) { return proptest.RunLaws(counterModel(), cfg) },
		"convergence/counter": func() (proptest.Result, error) { return proptest.RunConvergence(counterModel(), cfg) },
		"laws/ledger":         func() (proptest.Result, error) { return proptest.RunLaws(ledgerModel(), cfg) },
		"convergence/ledger":  func() (proptest.Result, error) { return proptest.RunConvergence(ledgerModel(), cfg) },
	}
	for _, name := range []string{"laws/counter", "convergence/counter", "laws/ledger", "convergence/ledger"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := run[name]()
				if err != nil || !res.Passed {
					b.Fatalf("%v\n%s", err, res.Report)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cases), "ns/case")
		})
	}
}

// BenchmarkGenSchedule measures generating one full-length schedule.
func BenchmarkGenSchedule(b *testing.B) {
	g := proptest.GenSchedule[int64](gen.Int64Range(1, 9), proptest.Options{})
	params := gopter.DefaultGenParameters().CloneWithSeed(1).WithSize(proptest.MaxSteps(proptest.DefaultMaxOps))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := g(params).Retrieve(); !ok {
			b.Fatal("no schedule")
		}
	}
}
