package vectors

// Option checks of the driver files (SPEC.md 6.1 and 6.9, 7.4, 8.4, 9.3
// and 13.5: the rules for a driver's options): each is a set of options
// and the error kind the driver's constructor gives ("" when it accepts
// them). The replay builds the Go driver with them; the model applies the
// rules as SPEC states them, so a constructor that accepts an unsafe
// option, or refuses a safe one, fails both.

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/tpncounter"
)

// dvOptionCheck is one entry of a driver file's option_checks.
type dvOptionCheck struct {
	Note    string    `json:"note"`
	Options dvOptions `json:"options"`
	Error   string    `json:"error,omitempty"`
}

// dvOptionsGo builds the Go driver with o and returns the error kind.
func dvOptionsGo(driver string, o dvOptions) string {
	switch driver {
	case "balance":
		_, err := balance.New(memory.NewPartitions(), dvBalanceOptions(o, nil))
		return dvKind(err)
	case "ledger":
		counter := tpncounter.Options{HistoryLength: o.HistoryLength, FoldedLength: o.FoldedLength,
			MaxActors: o.MaxActors, FutureSkew: dvDur(o.FutureSkewNS)}
		switch o.TxnTime {
		case "":
		case "timeuuid":
			counter.TxnTime = tpncounter.TimeUUID
		default:
			return "unknown txn_time " + o.TxnTime
		}
		_, err := ledger.New(memory.NewSiblings(), o.Key, ledger.Options{Actor: "a", RetryCount: o.RetryCount,
			Counter: counter, RetryWindow: dvDur(o.RetryWindowNS), MaxGroup: o.MaxGroup})
		return dvKind(err)
	case "tally":
		if o.Resends == nil {
			o.Resends = dvN(tally.DefaultRetries)
		}
		_, err := tally.New[*tally.Sum](memory.NewPartitions(), o.Key, dvTallyOptions(o, nil, nil))
		return dvKind(err)
	case "deltalog":
		_, err := deltalog.New(memory.NewPartitions(), deltalog.Options{Window: dvDur(o.WindowNS), FutureSkew: dvDur(o.FutureSkewNS),
			SafetyMargin: dvDur(o.SafetyMarginNS), MaxScan: dvDur(o.MaxScanNS), CompactGrace: dvDur(o.CompactGraceNS),
			MaxMergeCells: o.MaxMergeCells})
		return dvKind(err)
	case "bounded":
		_, err := bounded.Open(memory.NewSiblings(), o.Key, dvBoundedOptions(o, "a"))
		return dvKind(err)
	}
	return "no option checks for " + driver
}

// dvBalanceOptions are the balance driver's options as a vector gives
// them, read with clock (nil: time.Now).
func dvBalanceOptions(o dvOptions, clock func() time.Time) balance.Options {
	return balance.Options{Window: dvDur(o.WindowNS), FutureSkew: dvDur(o.FutureSkewNS),
		SafetyMargin: dvDur(o.SafetyMarginNS), MaxMerge: dvDur(o.MaxMergeNS), SettleGrace: dvDur(o.SettleGraceNS),
		GCGrace: dvDur(o.GCGraceNS), Clock: clock}
}

// dvTxnOptions are the balance Transactions options a vector gives.
func dvTxnOptions(o dvOptions, clock func() time.Time) balance.TxnOptions {
	return balance.TxnOptions{Options: dvBalanceOptions(o, clock), RetryWindow: dvDur(o.RetryWindowNS),
		Deadline: dvDur(o.DeadlineNS), Partitions: o.Partitions, RecordShards: o.RecordShards}
}

// dvBoundedOptions are the options of a vector's Account of actor, which
// waits nothing between attempts.
func dvBoundedOptions(o dvOptions, actor crdt.ActorID) bounded.AccountOptions {
	var keep int64
	if o.Keep != nil {
		keep = int64(*o.Keep)
	}
	return bounded.AccountOptions{Actor: actor, Counter: bounded.Options{Window: o.Window},
		Keep: keep, RetryCount: o.RetryCount, Backoff: bounded.Backoff{Initial: -1},
		RetryWindow: dvDur(o.RetryWindowNS), Clock: func() time.Time { return dvT0 }}
}

// dvOr is the duration p gives, or def when it gives 0 or nothing.
func dvOr(p *dvInt, def time.Duration) time.Duration {
	if v := dvDur(p); v != 0 {
		return v
	}
	return def
}

// dvExact is the sum of ds as an integer that does not overflow.
func dvExact(ds ...time.Duration) *big.Int {
	sum := new(big.Int)
	for _, d := range ds {
		sum.Add(sum, big.NewInt(int64(d)))
	}
	return sum
}

// dvOptionsModel is SPEC's verdict on o: 6.1 and 6.9's ranges for the
// ledger, 7.4's configuration for tally, 8.4's options for deltalog, 9.3's
// defaults and bounds for balance, 13.1 and 13.5's for the bounded
// Account. Bounds that relate options are compared exactly.
func dvOptionsModel(driver string, o dvOptions) string {
	switch driver {
	case "balance":
		w, fs, sm := dvOr(o.WindowNS, 5*time.Minute), dvOr(o.FutureSkewNS, 5*time.Second), dvOr(o.SafetyMarginNS, 30*time.Second)
		mm, sg, gc := dvOr(o.MaxMergeNS, 10*time.Second), dvOr(o.SettleGraceNS, time.Minute), dvOr(o.GCGraceNS, 10*time.Minute)
		switch {
		case w < 0 || fs < 0 || sm < 0 || mm < 0 || sg < 0 || gc < 0:
			return "invalid_config"
		case dvExact(sm).Cmp(dvExact(fs, fs)) <= 0, dvExact(sg).Cmp(dvExact(mm, sm)) < 0,
			dvExact(gc).Cmp(dvExact(w, sm)) < 0, gc < sg:
			return "invalid_config"
		}
		return ""
	case "ledger":
		h, f := o.HistoryLength, o.FoldedLength
		switch {
		case strings.HasPrefix(o.Key, "counterkit.txn/"):
			return "invalid_identifier"
		case h < 0 || h > 1024, f < 0 || f > 1024, o.MaxActors < 0 || o.MaxActors > 65536, dvDur(o.FutureSkewNS) < 0:
			return "invalid_config"
		}
		if h == 0 {
			h = 10
		}
		if f == 0 {
			f = h
		}
		switch {
		case o.RetryCount < 0 || o.RetryCount > 100,
			dvDur(o.RetryWindowNS) < 0 || dvDur(o.RetryWindowNS) > 400*24*time.Hour,
			o.MaxGroup < 0 || o.MaxGroup > h+f:
			return "invalid_config"
		}
		return ""
	case "tally":
		lt, mg, sk, gr := dvOr(o.LifetimeNS, 24*time.Hour), dvOr(o.MarginNS, time.Hour), dvOr(o.MaxSkewNS, time.Hour), dvOr(o.GraceNS, 24*time.Hour)
		whole := func(ds ...time.Duration) bool {
			for _, d := range ds {
				if d%time.Microsecond != 0 {
					return false
				}
			}
			return true
		}
		switch {
		case lt < 0 || mg < 0 || sk < 0 || gr < 0 || o.MaxRows < 0:
			return "invalid_config"
		case !(0 < mg && mg < lt), dvExact(gr).Cmp(dvExact(sk, sk, sk)) < 0, !whole(lt, mg, sk, gr):
			return "invalid_config"
		}
		return ""
	case "deltalog":
		w, fs, sm := dvOr(o.WindowNS, 10*time.Minute), dvOr(o.FutureSkewNS, 5*time.Second), dvOr(o.SafetyMarginNS, time.Minute)
		ms, cg := dvOr(o.MaxScanNS, 10*time.Second), dvOr(o.CompactGraceNS, 2*time.Minute)
		switch {
		case w < 0 || fs < 0 || sm < 0 || ms < 0 || cg < 0 || o.MaxMergeCells < 0:
			return "invalid_config"
		case dvExact(sm).Cmp(dvExact(fs, fs)) <= 0, dvExact(cg).Cmp(dvExact(ms, sm)) < 0:
			return "invalid_config"
		}
		return ""
	case "bounded":
		switch {
		case o.Keep != nil && *o.Keep < 0, o.RetryCount < 0 || o.RetryCount > 100, o.Window < 0 || o.Window > 1024:
			return "invalid_config"
		}
		return ""
	}
	return "no option checks for " + driver
}

// dvGenOptionChecks fills in each check's error from the Go driver.
func dvGenOptionChecks(driver string, cs []dvOptionCheck) []dvOptionCheck {
	for i := range cs {
		cs[i].Error = dvOptionsGo(driver, cs[i].Options)
	}
	return cs
}

// dvCheckOptions replays (the Go driver) or models (SPEC) every option
// check of f.
func dvCheckOptions(f dvFile, model bool) []string {
	var out []string
	for i, c := range f.OptionChecks {
		got, by := dvOptionsGo(f.Driver, c.Options), "the driver"
		if model {
			got, by = dvOptionsModel(f.Driver, c.Options), "the model"
		}
		if got != c.Error {
			out = append(out, fmt.Sprintf("option check %d (%s): error %q, %s gives %q", i+1, c.Note, c.Error, by, got))
		}
	}
	return out
}

func dvBalanceOptionChecks() []dvOptionCheck {
	ns := func(d time.Duration) *dvInt { return dvI(int64(d)) }
	return dvGenOptionChecks("balance", []dvOptionCheck{
		{Note: "every option zero: the defaults (Window 5m, FutureSkew 5s, SafetyMargin 30s, MaxMerge 10s, SettleGrace 1m, GCGrace 10m)"},
		{Note: "a negative Window", Options: dvOptions{WindowNS: ns(-time.Second)}},
		{Note: "SafetyMargin equal to 2·FutureSkew: it must exceed it", Options: dvOptions{FutureSkewNS: ns(15 * time.Second)}},
		{Note: "SafetyMargin just above 2·FutureSkew", Options: dvOptions{FutureSkewNS: ns(15*time.Second - 1)}},
		{Note: "SettleGrace equal to MaxMerge + SafetyMargin", Options: dvOptions{SettleGraceNS: ns(40 * time.Second)}},
		{Note: "SettleGrace just below MaxMerge + SafetyMargin", Options: dvOptions{SettleGraceNS: ns(40*time.Second - 1)}},
		{Note: "GCGrace equal to Window + SafetyMargin", Options: dvOptions{GCGraceNS: ns(5*time.Minute + 30*time.Second)}},
		{Note: "GCGrace just below Window + SafetyMargin", Options: dvOptions{GCGraceNS: ns(5*time.Minute + 30*time.Second - 1)}},
		{Note: "GCGrace below SettleGrace, though above Window + SafetyMargin", Options: dvOptions{WindowNS: ns(time.Second), SettleGraceNS: ns(2 * time.Minute), GCGraceNS: ns(time.Minute)}},
		{Note: "FutureSkew 2^62 ns: 2·FutureSkew exceeds SafetyMargin (30s) (and int64)", Options: dvOptions{FutureSkewNS: dvI(1 << 62)}},
		{Note: "MaxMerge 2^63 − 1 − 10 s: MaxMerge + SafetyMargin exceeds SettleGrace (and int64)", Options: dvOptions{MaxMergeNS: dvI(math.MaxInt64 - int64(10*time.Second))}},
		{Note: "Window 2^63 − 1 − 10 s: Window + SafetyMargin exceeds GCGrace (and int64)", Options: dvOptions{WindowNS: dvI(math.MaxInt64 - int64(10*time.Second))}},
	})
}

func dvBoundedOptionChecks() []dvOptionCheck {
	return dvGenOptionChecks("bounded", []dvOptionCheck{
		{Note: "Keep 0, RetryCount 0 (3), window 0 (64)", Options: dvOptions{Key: "acct", Keep: dvI(0)}},
		{Note: "a negative Keep", Options: dvOptions{Key: "acct", Keep: dvI(-1)}},
		{Note: "RetryCount 100, the most", Options: dvOptions{Key: "acct", Keep: dvI(0), RetryCount: 100}},
		{Note: "RetryCount 101", Options: dvOptions{Key: "acct", Keep: dvI(0), RetryCount: 101}},
		{Note: "a negative RetryCount", Options: dvOptions{Key: "acct", Keep: dvI(0), RetryCount: -1}},
		{Note: "window 1024, the most", Options: dvOptions{Key: "acct", Keep: dvI(0), Window: 1024}},
		{Note: "window 1025", Options: dvOptions{Key: "acct", Keep: dvI(0), Window: 1025}},
		{Note: "a negative window", Options: dvOptions{Key: "acct", Keep: dvI(0), Window: -1}},
	})
}

// TestOptionChecksCatchWrongExpectations flips the answer of every option
// check in turn: the replay and the model must each report it.
func TestOptionChecksCatchWrongExpectations(t *testing.T) {
	for _, f := range []dvFile{{Driver: "balance", OptionChecks: dvBalanceOptionChecks()}, {Driver: "bounded", OptionChecks: dvBoundedOptionChecks()},
		{Driver: "ledger", OptionChecks: dvLedgerOptionChecks()}, {Driver: "tally", OptionChecks: dvTallyOptionChecks()},
		{Driver: "deltalog", OptionChecks: dvDeltalogOptionChecks()}} {
		for i := range f.OptionChecks {
			wrong := f
			wrong.OptionChecks = slices.Clone(f.OptionChecks)
			if wrong.OptionChecks[i].Error == "" {
				wrong.OptionChecks[i].Error = "invalid_config"
			} else {
				wrong.OptionChecks[i].Error = ""
			}
			for _, model := range []bool{false, true} {
				if ps := dvCheckOptions(wrong, model); len(ps) != 1 {
					t.Errorf("%s option check %d flipped: model=%v reports %q, want one problem", f.Driver, i+1, model, ps)
				}
			}
		}
	}
}

func dvLedgerOptionChecks() []dvOptionCheck {
	day := 24 * time.Hour
	return dvGenOptionChecks("ledger", []dvOptionCheck{
		{Note: "every option zero: RetryCount 3, RetryWindow 24h, MaxGroup the smaller of 16 and H + F (20)", Options: dvOptions{Key: "k"}},
		{Note: "RetryCount 100, the most", Options: dvOptions{Key: "k", RetryCount: 100}},
		{Note: "RetryCount 101", Options: dvOptions{Key: "k", RetryCount: 101}},
		{Note: "RetryWindow 400 days, the most", Options: dvOptions{Key: "k", RetryWindowNS: dvI(int64(400 * day))}},
		{Note: "RetryWindow 400 days and 1 ns", Options: dvOptions{Key: "k", RetryWindowNS: dvI(int64(400*day + 1))}},
		{Note: "MaxGroup H + F with history 3 and folded 2: 5", Options: dvOptions{Key: "k", HistoryLength: 3, FoldedLength: 2, MaxGroup: 5}},
		{Note: "MaxGroup 6, above H + F = 5", Options: dvOptions{Key: "k", HistoryLength: 3, FoldedLength: 2, MaxGroup: 6}},
		{Note: "MaxGroup 7 with history 3 and folded 0 (F defaults to H): 6 is the most", Options: dvOptions{Key: "k", HistoryLength: 3, MaxGroup: 7}},
		{Note: "a negative MaxGroup", Options: dvOptions{Key: "k", MaxGroup: -1}},
		// The Counter's options (6.1): each range at and past both ends,
		// and MaxGroup against the H + F they give.
		{Note: "HistoryLength 1, the least", Options: dvOptions{Key: "k", HistoryLength: 1}},
		{Note: "a negative HistoryLength", Options: dvOptions{Key: "k", HistoryLength: -1}},
		{Note: "HistoryLength 1024, the most (F defaults to 1024)", Options: dvOptions{Key: "k", HistoryLength: 1024}},
		{Note: "HistoryLength 1025", Options: dvOptions{Key: "k", HistoryLength: 1025}},
		{Note: "FoldedLength 1, the least", Options: dvOptions{Key: "k", FoldedLength: 1}},
		{Note: "a negative FoldedLength", Options: dvOptions{Key: "k", FoldedLength: -1}},
		{Note: "FoldedLength 1024, the most", Options: dvOptions{Key: "k", FoldedLength: 1024}},
		{Note: "FoldedLength 1025", Options: dvOptions{Key: "k", FoldedLength: 1025}},
		{Note: "FoldedLength 1025 with MaxGroup 20, within H + F", Options: dvOptions{Key: "k", HistoryLength: 10, FoldedLength: 1025, MaxGroup: 20}},
		{Note: "MaxActors 1, the least", Options: dvOptions{Key: "k", MaxActors: 1}},
		{Note: "a negative MaxActors", Options: dvOptions{Key: "k", MaxActors: -1}},
		{Note: "MaxActors 65536, the most", Options: dvOptions{Key: "k", MaxActors: 65536}},
		{Note: "MaxActors 65537", Options: dvOptions{Key: "k", MaxActors: 65537}},
		{Note: "a negative Counter FutureSkew", Options: dvOptions{Key: "k", TxnTime: "timeuuid", FutureSkewNS: dvI(-1)}},
		{Note: "TxnTime TimeUUID with FutureSkew 1 ns", Options: dvOptions{Key: "k", TxnTime: "timeuuid", FutureSkewNS: dvI(1)}},
		{Note: "MaxGroup 2048 with history 1024 and folded 1024, the largest window", Options: dvOptions{Key: "k", HistoryLength: 1024, FoldedLength: 1024, MaxGroup: 2048}},
		{Note: "MaxGroup 2049 with history 1024 and folded 1024", Options: dvOptions{Key: "k", HistoryLength: 1024, FoldedLength: 1024, MaxGroup: 2049}},
		{Note: "MaxGroup 1034 with history 0 (10) and folded 1024", Options: dvOptions{Key: "k", FoldedLength: 1024, MaxGroup: 1034}},
		{Note: "MaxGroup 1035 with history 0 (10) and folded 1024", Options: dvOptions{Key: "k", FoldedLength: 1024, MaxGroup: 1035}},
		{Note: "MaxGroup 2 with history 1 and folded 1, the smallest window", Options: dvOptions{Key: "k", HistoryLength: 1, FoldedLength: 1, MaxGroup: 2}},
		{Note: "MaxGroup 3 with history 1 and folded 1", Options: dvOptions{Key: "k", HistoryLength: 1, FoldedLength: 1, MaxGroup: 3}},
		{Note: "every range at its most: H 1024, F 1024, MaxActors 65536, MaxGroup 2048, RetryCount 100, RetryWindow 400 days, TxnTime TimeUUID",
			Options: dvOptions{Key: "k", HistoryLength: 1024, FoldedLength: 1024, MaxActors: 65536, MaxGroup: 2048, RetryCount: 100,
				RetryWindowNS: dvI(int64(400 * day)), TxnTime: "timeuuid"}},
		{Note: "every range at its most but RetryWindow 400 days and 1 ns",
			Options: dvOptions{Key: "k", HistoryLength: 1024, FoldedLength: 1024, MaxActors: 65536, MaxGroup: 2048, RetryCount: 100,
				RetryWindowNS: dvI(int64(400*day + 1)), TxnTime: "timeuuid"}},
		{Note: "a negative RetryWindow", Options: dvOptions{Key: "k", RetryWindowNS: dvI(-1)}},
		{Note: "a key in the records' space (6.11)", Options: dvOptions{Key: "counterkit.txn/0123456789ABCDEFGHIJKLMNOPQRSTUV"}},
		{Note: "a key that only begins like one", Options: dvOptions{Key: "counterkit.txn"}},
	})
}

func dvTallyOptionChecks() []dvOptionCheck {
	ns := func(d time.Duration) *dvInt { return dvI(int64(d)) }
	return dvGenOptionChecks("tally", []dvOptionCheck{
		{Note: "every option zero or absent: the defaults (Lifetime 24h, Margin 1h, MaxSkew 1h, Grace 24h, 2 resends, MaxRows 2^20)", Options: dvOptions{Key: "hits"}},
		{Note: "a negative Lifetime", Options: dvOptions{Key: "hits", LifetimeNS: ns(-time.Microsecond)}},
		{Note: "a negative Margin", Options: dvOptions{Key: "hits", MarginNS: ns(-time.Microsecond)}},
		{Note: "a negative MaxSkew", Options: dvOptions{Key: "hits", MaxSkewNS: ns(-time.Microsecond)}},
		{Note: "a negative Grace", Options: dvOptions{Key: "hits", GraceNS: ns(-time.Microsecond)}},
		{Note: "Margin equal to Lifetime (1h): it must be below it", Options: dvOptions{Key: "hits", LifetimeNS: ns(time.Hour)}},
		{Note: "Lifetime 1h + 1 µs, just above the Margin", Options: dvOptions{Key: "hits", LifetimeNS: ns(time.Hour + time.Microsecond)}},
		{Note: "Margin 1 µs below Lifetime", Options: dvOptions{Key: "hits", LifetimeNS: ns(10 * time.Minute), MarginNS: ns(10*time.Minute - time.Microsecond)}},
		{Note: "Margin above Lifetime", Options: dvOptions{Key: "hits", LifetimeNS: ns(10 * time.Minute), MarginNS: ns(11 * time.Minute)}},
		{Note: "Lifetime 2 µs and Margin 1 µs, the least", Options: dvOptions{Key: "hits", LifetimeNS: ns(2 * time.Microsecond), MarginNS: ns(time.Microsecond)}},
		{Note: "Grace equal to 3·MaxSkew (8h)", Options: dvOptions{Key: "hits", MaxSkewNS: ns(8 * time.Hour)}},
		{Note: "Grace 1 µs below 3·MaxSkew", Options: dvOptions{Key: "hits", MaxSkewNS: ns(8 * time.Hour), GraceNS: ns(24*time.Hour - time.Microsecond)}},
		{Note: "MaxSkew 1 µs above Grace / 3", Options: dvOptions{Key: "hits", MaxSkewNS: ns(8*time.Hour + time.Microsecond)}},
		{Note: "Lifetime not a whole number of microseconds", Options: dvOptions{Key: "hits", LifetimeNS: ns(24*time.Hour + 1)}},
		{Note: "Margin not a whole number of microseconds", Options: dvOptions{Key: "hits", MarginNS: ns(time.Hour + 1)}},
		{Note: "Grace not a whole number of microseconds", Options: dvOptions{Key: "hits", GraceNS: ns(24*time.Hour + 1)}},
		{Note: "resends 0: one attempt per send", Options: dvOptions{Key: "hits", Resends: dvN(0)}},
		{Note: "resends 1000", Options: dvOptions{Key: "hits", Resends: dvN(1000)}},
		{Note: "MaxRows 1", Options: dvOptions{Key: "hits", MaxRows: 1}},
		{Note: "a negative MaxRows", Options: dvOptions{Key: "hits", MaxRows: -1}},
		{Note: "MaxSkew 1h + 1 ns: durations are whole microseconds", Options: dvOptions{Key: "hits", MaxSkewNS: dvI(int64(time.Hour + 1))}},
		{Note: "MaxSkew 3,074,457,345,619 s: 3·MaxSkew exceeds Grace (24h) (and int64)", Options: dvOptions{Key: "hits", MaxSkewNS: dvI(3_074_457_345_619_000_000)}},
	})
}

func dvDeltalogOptionChecks() []dvOptionCheck {
	ns := func(d time.Duration) *dvInt { return dvI(int64(d)) }
	return dvGenOptionChecks("deltalog", []dvOptionCheck{
		{Note: "every option zero or absent: the defaults (Window 10m, FutureSkew 5s, SafetyMargin 1m, MaxScan 10s, CompactGrace 2m, MaxMergeCells 100,000)", Options: dvOptions{Key: "views"}},
		{Note: "a negative Window", Options: dvOptions{Key: "views", WindowNS: ns(-1)}},
		{Note: "a negative FutureSkew", Options: dvOptions{Key: "views", FutureSkewNS: ns(-1)}},
		{Note: "a negative SafetyMargin", Options: dvOptions{Key: "views", SafetyMarginNS: ns(-1)}},
		{Note: "a negative MaxScan", Options: dvOptions{Key: "views", MaxScanNS: ns(-1)}},
		{Note: "a negative CompactGrace", Options: dvOptions{Key: "views", CompactGraceNS: ns(-1)}},
		{Note: "Window 1 ns", Options: dvOptions{Key: "views", WindowNS: ns(1)}},
		{Note: "SafetyMargin (1m) equal to 2·FutureSkew: it must exceed it", Options: dvOptions{Key: "views", FutureSkewNS: ns(30 * time.Second)}},
		{Note: "SafetyMargin (1m) just above 2·FutureSkew", Options: dvOptions{Key: "views", FutureSkewNS: ns(30*time.Second - 1)}},
		{Note: "SafetyMargin 10s, equal to 2·FutureSkew (5s)", Options: dvOptions{Key: "views", SafetyMarginNS: ns(10 * time.Second)}},
		{Note: "SafetyMargin 10s + 1 ns, just above 2·FutureSkew (5s); CompactGrace 2m covers it", Options: dvOptions{Key: "views", SafetyMarginNS: ns(10*time.Second + 1)}},
		{Note: "CompactGrace equal to MaxScan + SafetyMargin (70s)", Options: dvOptions{Key: "views", CompactGraceNS: ns(70 * time.Second)}},
		{Note: "CompactGrace 1 ns below MaxScan + SafetyMargin", Options: dvOptions{Key: "views", CompactGraceNS: ns(70*time.Second - 1)}},
		{Note: "MaxScan 1m: MaxScan + SafetyMargin equal to CompactGrace (2m)", Options: dvOptions{Key: "views", MaxScanNS: ns(time.Minute)}},
		{Note: "MaxScan 1m + 1 ns: MaxScan + SafetyMargin above CompactGrace", Options: dvOptions{Key: "views", MaxScanNS: ns(time.Minute + 1)}},
		{Note: "SafetyMargin 2m: MaxScan + SafetyMargin above CompactGrace (2m)", Options: dvOptions{Key: "views", SafetyMarginNS: ns(2 * time.Minute)}},
		{Note: "FutureSkew 2^62 ns: 2·FutureSkew exceeds SafetyMargin (1m) (and int64)", Options: dvOptions{Key: "views", FutureSkewNS: dvI(1 << 62)}},
		{Note: "MaxScan 2^63 − 1 − 30 s: MaxScan + SafetyMargin exceeds CompactGrace (2m) (and int64)", Options: dvOptions{Key: "views", MaxScanNS: dvI(math.MaxInt64 - int64(30*time.Second))}},
		{Note: "a negative MaxMergeCells", Options: dvOptions{Key: "views", MaxMergeCells: -1}},
		{Note: "MaxMergeCells 1", Options: dvOptions{Key: "views", MaxMergeCells: 1}},
	})
}
