package vectors

// Mutation check of the vectors (issue 19): every SPEC.md rule listed in
// vectorMutants is removed from the Go implementation in turn, in a copy of
// the module, and at least one vector must then fail. A rule no vector
// catches could be deleted from a port that passes every vector.
//
// Each mutant rebuilds the module, so the check is opt-in:
//
//	go test ./vectors -run TestVectorMutants -mutants            # every mutant
//	go test ./vectors -run 'TestVectorMutants/gcounter' -mutants # some
//
// A mutant whose text is no longer found in its file fails: the rule moved,
// and the mutant must follow it.

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var mutants = flag.Bool("mutants", false, "run TestVectorMutants: remove each listed SPEC rule from the code in a copy of the module and require a vector to fail")

// edit replaces old, which must occur exactly once in file, with new.
type edit struct{ file, old, new string }

// vectorMutant removes one rule. Vectors names the vector file whose check
// must fail (the test runs only that file's vectors) and Want a string the
// failure output must contain (usually the failing vector's subtest name).
type vectorMutant struct {
	name    string
	rule    string
	edits   []edit
	vectors string
	want    string
}

var vectorMutants = []vectorMutant{
	// gcounter, pncounter (SPEC.md 4.2, 5.2)
	{"gcounter/increment cap", "4.2 step 5: a new actor when 30000 are present is too_large",
		[]edit{{"gcounter/gcounter.go", "if len(c.entries) >= MaxActors {", "if false && len(c.entries) >= MaxActors {"}}, "gcounter", "30000_actors:_a_new_actor_is_refused"},
	{"gcounter/merge cap", "4.2 Merge: a union above 65536 actors is too_large",
		[]edit{{"gcounter/gcounter.go", "if n := len(c.entries) + added; n > MaxMergedActors {", "if n := len(c.entries) + added; false && n > MaxMergedActors {"}}, "gcounter", "merge_beyond_65536_actors_is_refused"},
	{"gcounter/merge not capped by MaxActors", "4.2 Merge: a union above 30000 actors is accepted",
		[]edit{{"gcounter/gcounter.go", "return len(c.entries)+len(other.entries) <= MaxMergedActors", "return len(c.entries)+len(other.entries) <= MaxActors"},
			{"gcounter/gcounter.go", "if n := len(c.entries) + added; n > MaxMergedActors {", "if n := len(c.entries) + added; n > MaxActors {"}}, "gcounter", "merge_beyond_30000_actors_is_accepted"},
	{"gcounter/decoder not capped by MaxActors", "4.4: 30001 rows pass the header",
		[]edit{{"gcounter/codec.go", "n, err := d.ArrayLen(MaxMergedActors)", "n, err := d.ArrayLen(MaxActors)"}}, "gcounter", "v2:_30001_rows,_bytes_missing"},
	// gcounter format version 2 (SPEC.md 4.4): the decoder's rules for the
	// front-coded rows, and the encoder's character boundary (the row
	// reader and the shared prefix live in internal/wire, shared with
	// pncounter). (The check
	// that a rebuilt id is at most 255 bytes has no mutant: the id check
	// of 2.1 refuses such an id too, with the same kind.)
	{"gcounter/v2 row cap", "4.4: more than 65536 rows is too_large, before the remaining-bytes check",
		[]edit{{"gcounter/codec.go", "n, err := d.ArrayLen(MaxMergedActors)", "n, err := d.ArrayLen(1<<31 - 1)"}}, "gcounter", "v2:_more_than_65536_rows"},
	{"gcounter/v2 shared within the previous id", "4.4: shared greater than the previous actor's length is corrupt",
		[]edit{{"internal/wire/frontcode.go", "if shared > int64(len(prev)) {", "if false && shared > int64(len(prev)) {"}}, "gcounter", "v2:_shares_more_than_the_previous_id"},
	{"gcounter/v2 rows increasing", "4.4: rows strictly increasing by actor",
		[]edit{{"internal/wire/frontcode.go", "if i > 0 && id <= prev {", "if false && i > 0 && id <= prev {"}}, "gcounter", "v2:_rows_unsorted"},
	{"gcounter/v2 canonical shared", "4.4: shared must be the canonical value",
		[]edit{{"internal/wire/frontcode.go", "if want := SharedPrefix(prev, id); int64(want) != shared {", "if want := SharedPrefix(prev, id); false && int64(want) != shared {"}}, "gcounter", "v2:_shares_less_than_the_common_prefix"},
	{"gcounter/v2 character boundary", "4.4: the shared prefix ends on a character boundary",
		[]edit{{"internal/wire/frontcode.go", "for k > 0 && k < len(next) && !utf8.RuneStart(next[k]) {", "for false && k > 0 && k < len(next) && !utf8.RuneStart(next[k]) {"}}, "gcounter", "front-coded_ids"},
	{"gcounter/v2 valid actor", "4.4: an invalid rebuilt actor is corrupt",
		[]edit{{"gcounter/codec.go", "if err := crdt.ActorID(actor).Validate(); err != nil {", "if err := crdt.ActorID(actor).Validate(); false && err != nil {"}}, "gcounter", "v2:_invalid_actor"},
	{"gcounter/v2 zero count", "4.4: a count of 0 is corrupt",
		[]edit{{"gcounter/codec.go", "if count == 0 {", "if false && count == 0 {"}}, "gcounter", "v2:_zero_count"},
	{"pncounter/count and value, not the half", "5.2: a half's total may pass 2^63-1 while the count and the value fit",
		[]edit{{"pncounter/pncounter.go", "if count > math.MaxInt64-n || !next.IsInt64() && (v.IsInt64() || next.CmpAbs(v) >= 0) {", "if _ = next; true {"}}, "pncounter", "extremes:_an_actor's_count_and_the_value"},
	{"gcounter/increment past int64", "4.2 step 3: an increment whose total would pass 2^63-1 is overflow",
		[]edit{{"gcounter/gcounter.go", "\tif !c.fits(n) {", "\tif false && !c.fits(n) {"}}, "gcounter", "merge_past_int64"},
	{"pncounter/half cap on increment", "5.1: each half has its own 30000 actors",
		[]edit{{"gcounter/gcounter.go", "if len(c.entries) >= MaxActors {", "if false && len(c.entries) >= MaxActors {"}}, "pncounter", "30000_actors_in_N"},
	{"pncounter/merge checks N first", "5.2 Merge: all or nothing, both halves checked first",
		[]edit{{"pncounter/pncounter.go", "if err := c.n.CheckMerge(&other.n); err != nil {", "if err := c.n.CheckMerge(&other.n); false && err != nil {"}}, "pncounter", "merge_beyond_65536_actors_in_one_half"},
	{"bounded/transfer recipient cap", "13.2 Transfer: a 4097th recipient of one entry is too_large",
		[]edit{{"bounded/counter.go", "if len(e.sent) >= MaxActors {", "if false && len(e.sent) >= MaxActors {"}}, "bounded", "4096_recipients"},
	// bounded (SPEC.md 13.4): invariants of the states honest writers produce
	{"bounded/value at least the bound", "13.4: a value below the bound is corrupt (value-at-least-bound)",
		[]edit{{"bounded/codec.go", "if above.Sub(o.Bound); above.Clamp() < 0 {", "if above.Sub(o.Bound); false && above.Clamp() < 0 {"}}, "bounded", "value_below_the_bound"},
	{"bounded/rights non-negative", "13.4: an actor's rights below zero are corrupt (rights-non-negative)",
		[]edit{{"bounded/codec.go", "if r.Clamp() < 0 {", "if false && r.Clamp() < 0 {"}}, "bounded", "rights_below_zero"},
	{"bounded/given fits", "13.4: rights one actor gave summing beyond int64 are corrupt (given-fits)",
		[]edit{{"bounded/codec.go", "if !fitsInt64(given) {", "if false && !fitsInt64(given) {"}}, "bounded", "rights_given_beyond_int64"},
	{"bounded/decode past int64", "13.1, 13.4: a value, received or rights total past int64 decodes",
		[]edit{{"bounded/codec.go", "\trights := map[crdt.ActorID]exact.Int128{}\n", "\tif !fitsInt64(c.value) {\n\t\treturn nil, invariantf(\"value-fits\", \"\")\n\t}\n\trights := map[crdt.ActorID]exact.Int128{}\n"}}, "bounded", "decode/value_beyond_int64"},
	{"bounded/seq counts writes", "13.4: a sequence number below the writes an entry shows is corrupt (seq-counts-writes)",
		[]edit{{"bounded/codec.go", "if e.seq < writes {", "if false && e.seq < writes {"}}, "bounded", "sequence_number_below_the_writes_shown"},
	{"bounded/recipient cap", "13.4: more than 4096 recipients in an entry is too_large",
		[]edit{{"bounded/codec.go", "ns, err := d.ArrayLen(MaxActors)", "ns, err := d.ArrayLen(MaxMergedActors)"}}, "bounded", "decode/more_than_4096_recipients"},
	{"bounded/recent cap", "13.4: more than 1024 recent transactions in an entry is too_large",
		[]edit{{"bounded/codec.go", "nr, err := d.ArrayLen(MaxWindow)", "nr, err := d.ArrayLen(MaxActors)"}}, "bounded", "decode/more_than_1024_recent_transactions"},
	{"bounded/transaction ids valid", "13.4, 2.1: an invalid transaction id is corrupt",
		[]edit{{"bounded/codec.go", "if err := id.Validate(); err != nil {", "if err := id.Validate(); false && err != nil {"}}, "bounded", "decode/an_invalid_transaction_id"},
	{"bounded/recipients valid", "13.4, 2.1: an invalid recipient is corrupt",
		[]edit{{"bounded/codec.go", "to, err := d.Actor()", "toS, err := d.String(crdt.MaxIDLen)\n\t\tto := crdt.ActorID(toS)"}}, "bounded", "decode/an_invalid_recipient"},
	// tgcounter, tpncounter (SPEC.md 6)
	{"tpncounter/lowest version", "3.2, 6.7: a state under a version above the one it needs is corrupt",
		[]edit{{"tpncounter/codec.go", "if canonical && r.version > need {", "if false && canonical && r.version > need {"}}, "tpncounter", "malformed/tgcounter/v3:_empty_tgcounter"},
	{"tpncounter/forgot within txn times", "6.7: a forgot after 2262-01-02 is corrupt (forgot-within-txn-times)",
		[]edit{{"tpncounter/invariants.go", "if forgot > maxForgotNanos {", "if false && forgot > maxForgotNanos {"}}, "tpncounter", "v3:_retired_entry_with_forgot_2^63-1"},
	{"tpncounter/seq counts items", "6.7: a sequence number below the transactions an entry holds is corrupt (seq-counts-items)",
		[]edit{{"tpncounter/invariants.go", "if e.seq < uint64(n) {", "if false && e.seq < uint64(n) {"}}, "tpncounter", "seq_below_the_transactions_held"},
	{"tpncounter/total covers folded", "6.7: a total below the folded record's sum is corrupt (total-covers-folded)",
		[]edit{{"tpncounter/invariants.go", "if amt > left {", "if false && amt > left {"}}, "tpncounter", "total_below_the_folded_record"},
	{"tpncounter/history within cap", "6.7: a history beyond MaxHistoryLength + 1 is corrupt (history-within-cap)",
		[]edit{{"tpncounter/invariants.go", "if h := n - nf; h > MaxHistoryLength+1 {", "if h := n - nf; false && h > MaxHistoryLength+1 {"}}, "tpncounter", "history_beyond_MaxHistoryLength_+_1"},
	{"tpncounter/actor order", "6.7: actors strictly increasing in a body",
		[]edit{{"tpncounter/codec.go", "if i > skip && a <= prev {", "if false && i > skip && a <= prev {"}}, "tpncounter", "actors_out_of_order"},
	{"tpncounter/merge order total", "6.5: total breaks a seq tie",
		[]edit{{"tpncounter/ring.go", "\tif c := cmp.Compare(a.total, b.total); c != 0 {\n\t\treturn c\n\t}\n", ""}}, "tpncounter", "merge_order:_total"},
	{"tpncounter/merge order forgot", "6.5: forgot breaks a seq and total tie",
		[]edit{{"tpncounter/ring.go", "\tif c := cmp.Compare(a.forgot, b.forgot); c != 0 {\n\t\treturn c\n\t}\n", ""}}, "tpncounter", "merge_order:_forgot"},
	{"tpncounter/merge order history", "6.5: the history list breaks the next tie",
		[]edit{{"tpncounter/ring.go", "if c := compareRuns(a, a.nf(), uint32(a.size()), b, b.nf(), uint32(b.size())); c != 0 {", "if c := 0; c != 0 {"}}, "tpncounter", "merge_order:_history"},
	{"tpncounter/merge order folded", "6.5: the folded list breaks the last tie",
		[]edit{{"tpncounter/ring.go", "return compareRuns(a, 0, a.nf(), b, 0, b.nf())", "return 0"}}, "tpncounter", "merge_order:_folded"},
	{"tpncounter/merge order amount", "6.5: lists compare (txn, amount) pairs",
		[]edit{{"tpncounter/ring.go", "if c := cmp.Compare(a.ring[ap].amt, b.ring[bp].amt); c != 0 {", "if c := 0; c != 0 {"}}, "tpncounter", "merge_order:_history"},
	{"tpncounter/apply value past int64", "6.3 step 5: the value after an Apply must fit",
		[]edit{{"tpncounter/gcounter.go", "if next := v; !fits(add(&next, signed)) && (fits(v) || (v.Clamp() > 0) == (signed > 0)) {", "if next := v; false && !fits(add(&next, signed)) {"}}, "tpncounter", "merge_past_int64"},
	{"tpncounter/apply actor sum", "6.3 step 5: an actor's own sum must fit",
		[]edit{{"tpncounter/gcounter.go", "if !fits(add(&sum, mag)) {", "if false && !fits(add(&sum, mag)) {"}}, "tpncounter", "overflow:_the_value_and_each_actor's_own_sum"},
	{"tpncounter/apply half past int64", "6.6: a half may pass int64, the counter's value may not",
		[]edit{{"tpncounter/gcounter.go", "if next := v; !fits(add(&next, signed)) && (fits(v) || (v.Clamp() > 0) == (signed > 0)) {", "if next, w := v, g.val; !fits(add(&next, signed)) || !fits(add(&w, mag)) {"}}, "tpncounter", "overflow:_the_value_and_each_actor's_own_sum"},
	{"tpncounter/fold below 2^126", "6.10: Fold folds nothing when the base's total would reach 2^126",
		[]edit{{"tpncounter/fold.go", "\tif !g.foldFits(cut) {\n\t\treturn 0", "\tif false {\n\t\treturn 0"}}, "tpncounter", "fold:_nothing_when_the_base_would_reach_2^126"},
	{"tpncounter/fold past int64", "6.10: a base's total may pass int64 (the old limit)",
		[]edit{{"tpncounter/fold.go", "return t.Cmp(maxBaseTotal) < 0", "return fits(t)"}}, "tpncounter", "fold:_a_base_past_int64"},
	{"tpncounter/apply moves towards int64", "6.3 step 5: out of range, a change towards int64 applies",
		[]edit{{"tpncounter/gcounter.go", "if next := v; !fits(add(&next, signed)) && (fits(v) || (v.Clamp() > 0) == (signed > 0)) {", "if next := v; !fits(add(&next, signed)) {"}}, "tpncounter", "three_writers_past_int64:_a_debit_moves_it_back"},
	{"tpncounter/decode sum-fits", "6.7: an entry whose total and history pass int64 is corrupt",
		[]edit{{"tpncounter/invariants.go", "\tif !fits(sum) {\n\t\treturn invariantf(InvSumFits", "\tif false {\n\t\treturn invariantf(InvSumFits"}}, "tpncounter", "malformed/tgcounter/total_and_history_past_int64"},
	{"tpncounter/merge entry bound", "6.5 step 2: a union of more than 131072 entries is too_large",
		[]edit{{"tpncounter/gcounter.go", "if live+retired > maxEntries {", "if false && live+retired > maxEntries {"}}, "tpncounter", "generated_merge/131073_entries_from_two_states"},
	{"tpncounter/merge entry bound at 131072", "6.5 step 2: a union of exactly 131072 entries is accepted",
		[]edit{{"tpncounter/gcounter.go", "if live+retired > maxEntries {", "if live+retired >= maxEntries {"}}, "tpncounter", "generated_merge/131072_entries_from_two_states"},
	{"tpncounter/merge not capped by MaxActors", "6.5 step 2: a union past MaxActors is accepted",
		[]edit{{"tpncounter/gcounter.go", "if live+retired > maxEntries {", "if live > g.o.MaxActors || live+retired > maxEntries {"}}, "tpncounter", "merge_past_MaxActors_is_accepted"},
	{"tpncounter/merge retired not capped alone", "6.5 step 2: retired entries count with the live ones, not against a cap of their own",
		[]edit{{"tpncounter/gcounter.go", "if live+retired > maxEntries {", "if retired > MaxRetired || live+retired > maxEntries {"}}, "tpncounter", "generated_merge/80000_retired_entries_from_two_states"},
	{"tpncounter/apply new actor at MaxActors", "6.3 step 4: a new actor when MaxActors live entries exist is too_large, also past MaxActors after a merge",
		[]edit{{"tpncounter/gcounter.go", "if e == nil && (g.live() >= g.o.MaxActors ||", "if e == nil && (false && g.live() >= g.o.MaxActors ||"}}, "tpncounter", "merge_past_MaxActors_is_accepted"},
	{"tpncounter/retired wins its seq", "6.5: a retired entry is larger than the live one of its seq",
		[]edit{{"tpncounter/ring.go", "\tif a.retired != b.retired {", "\tif false && a.retired != b.retired {"}}, "tpncounter", "retire:_the_retired_entry_wins_its_seq"},
	{"tpncounter/retire declined while shared", "6.10: Retire changes nothing while another entry holds one of the actor's txns",
		[]edit{{"tpncounter/retire.go", "if h+f > 1 && !brokenRetireShared {", "if false && h+f > 1 && !brokenRetireShared {"}}, "tpncounter", "retire:_declined_while_another_actor_holds"},
	{"tpncounter/late copy counted", "6.10 RetireLateAt: a late copy one entry alone holds leaves without counting",
		[]edit{{"tpncounter/retire.go", "if h+f == 1 && late[crdt.TxnID(id)] {", "if false && h+f == 1 && late[crdt.TxnID(id)] {"}}, "tpncounter", "retire:_a_late_copy_leaves_without_counting"},
	{"tpncounter/late copy held by others left out", "6.10 RetireLateAt: only a copy one entry alone holds leaves without counting",
		[]edit{{"tpncounter/retire.go", "if h+f == 1 && late[crdt.TxnID(id)] {", "if late[crdt.TxnID(id)] {"}}, "tpncounter", "retire:_a_late_copy_leaves_without_counting"},
	{"tpncounter/retire declines a copy that does not count", "6.10: a copy that is not the owner's leaves without counting while the owner's is folded",
		[]edit{{"tpncounter/retire.go", "if owns || rec.nfold == 0 {", "if true {"}}, "tpncounter", "retire:_a_copy_that_does_not_count_leaves"},
	{"tpncounter/retire lets a folded owner's copy leave", "6.10: the copy that counts retires only with every other holder",
		[]edit{{"tpncounter/retire.go", "if owns || rec.nfold == 0 {", "if rec.nfold == 0 {"}}, "tpncounter", "retire:_RetireAll_counts_each_shared_transaction_once,_by_its_owner"},
	{"tpncounter/retire forgot", "6.10: the retired entry's forgot is the newest time of its txns",
		[]edit{{"tpncounter/retire.go", "r.seq, r.total, r.forgot, r.retired = e.seq, t, forgot, true", "r.seq, r.total, r.forgot, r.retired = e.seq, t, e.forgot, true"}}, "tpncounter", "retire:_timed"},
	{"tpncounter/uuid text refused in version 3", "6.7: a UUID id written as text is corrupt in version 3",
		[]edit{{"internal/wire/uuid.go", "if _, ok := ParseUUIDText(string(s)); ok {", "if _, ok := ParseUUIDText(string(s)); false && ok {"}}, "tpncounter", "v3:_UUID_id_written_as_text"},
	{"tpncounter/oldest version written", "6.7: a state without retired entries or UUID ids is written as version 2",
		[]edit{{"tpncounter/codec.go", "v := uint64(2)", "v := uint64(FormatVersion)"}}, "tpncounter", "credits_and_debits"},
	{"tpncounter/a retired actor revived beyond MaxActors", "6.3 step 7 (6.10): an actor writing again after retirement is a new live entry and counts against MaxActors",
		[]edit{{"tpncounter/gcounter.go", "if e != nil && e.retired && g.live() >= g.o.MaxActors {", "if false && e != nil && e.retired && g.live() >= g.o.MaxActors {"}}, "tpncounter", "retire:_a_retired_actor_writing_again_counts_against_MaxActors"},
	// Retirement times and bases (SPEC.md 6.7, 6.10, format version 4).
	{"tpncounter/merge drops under the winning cutoff", "6.10 Merge: a retired entry retired before the kept base's cutoff is dropped",
		[]edit{{"tpncounter/variants.go", "\tbrokenMergeKeepsFolded      = false", "\tbrokenMergeKeepsFolded      = true"}}, "tpncounter", "fold:_merge_keeps_the_later_cutoff_and_drops_the_retired_entries_under_it"},
	{"tpncounter/earlier retirement wins", "6.10: of two retirements of one entry the earlier wins, none loses",
		[]edit{{"tpncounter/variants.go", "\tbrokenLaterRetirementWins   = false", "\tbrokenLaterRetirementWins   = true"}}, "tpncounter", "fold:_two_retirements_of_one_entry,_the_earlier_wins"},
	{"tpncounter/base order total", "6.10 Merge: equal cutoffs, the larger total wins",
		[]edit{{"tpncounter/fold.go", "return cmp.Or(cmp.Compare(b.cut, o.cut), b.total.Cmp(o.total), cmp.Compare(b.forgot, o.forgot))", "return cmp.Or(cmp.Compare(b.cut, o.cut), cmp.Compare(b.forgot, o.forgot))"}}, "tpncounter", "fold:_equal_cutoffs,_the_larger_total_wins"},
	{"tpncounter/base order exact past int64", "6.10 Merge: base totals past int64 compare exactly",
		[]edit{{"tpncounter/fold.go", "b.total.Cmp(o.total)", "cmp.Compare(b.total.Clamp(), o.total.Clamp())"}}, "tpncounter", "fold:_bases_past_int64_merge_alike_in_either_order"},
	{"tpncounter/fold strictly before the cutoff", "6.10 Fold: an entry retired at the cutoff stays",
		[]edit{{"tpncounter/fold.go", "return e.retired && e.retiredAt != 0 && e.retiredAt < cut", "return e.retired && e.retiredAt != 0 && e.retiredAt <= cut"}}, "tpncounter", "fold:_entries_retired_before_the_cutoff_move_into_the_base"},
	{"tpncounter/no time never folds", "6.10 Fold: an entry retired without a time is never folded",
		[]edit{{"tpncounter/fold.go", "return e.retired && e.retiredAt != 0 && e.retiredAt < cut", "return e.retired && e.retiredAt < cut"}}, "tpncounter", "fold:_entries_retired_before_the_cutoff_move_into_the_base"},
	{"tpncounter/retired at the cutoff", "6.10 RetireAllAt: a time before the base's cutoff is written as the cutoff",
		[]edit{{"tpncounter/retire.go", "r.retiredAt = max(at, g.base.cut)", "r.retiredAt = at"}}, "tpncounter", "fold:_a_retirement_before_the_base's_cutoff_is_written_at_the_cutoff"},
	{"tpncounter/version 3 without times", "6.7: a state with retired entries but no retirement time or base is written as version 3",
		[]edit{{"tpncounter/codec.go", "\t\tdefault:\n\t\t\tv = max(v, 3)", "\t\tdefault:\n\t\t\tv = FormatVersion"}}, "tpncounter", "retire:_an_idle_actor's_entry_keeps_its_total"},
	{"tpncounter/retired after the cutoff", "6.7: a retirement before its half's base cutoff is corrupt (retired-after-cutoff)",
		[]edit{{"tpncounter/codec.go", "\tif at < g.base.cut {", "\tif false && at < g.base.cut {"}}, "tpncounter", "v4:_retired_before_the_base's_cutoff"},
	{"tpncounter/base cutoff not 0", "6.7: a base of cutoff 0 is corrupt (base-cutoff)",
		[]edit{{"tpncounter/codec.go", "if b.cut == 0 || b.cut > maxForgotNanos {", "if b.cut > maxForgotNanos {"}}, "tpncounter", "v4:_base_of_cutoff_0"},
	{"tpncounter/base total below 2^126", "6.7: a base total of 2^126 or more is corrupt (base-total)",
		[]edit{{"tpncounter/codec.go", "if b.total.Cmp(maxBaseTotal) >= 0 {", "if false && b.total.Cmp(maxBaseTotal) >= 0 {"}}, "tpncounter", "v4:_base_total_of_2^126"},
	{"tpncounter/base total not negative past int64", "6.7: a negative base total is corrupt, in 16 bytes too",
		[]edit{{"tpncounter/codec.go", "if b.total.Cmp(exact.Int128{}) < 0 {", "if false && b.total.Cmp(exact.Int128{}) < 0 {"}}, "tpncounter", "v4:_negative_base_total_in_16_bytes"},
	{"tpncounter/base total in one form", "6.7: a base total that fits in int64 written in 16 bytes is corrupt",
		[]edit{{"internal/wire/wire.go", "if x, fits := v.Int64(); fits {", "if x, fits := v.Int64(); false && fits {"}}, "tpncounter", "v4:_base_total_5_in_16_bytes"},
	{"tpncounter/base total in a bin 8", "6.7: a base total of 16 bytes in another bin header is corrupt",
		[]edit{{"internal/wire/wire.go", "if c != msgpcode.Bin8 || n != int128Size {", "if n != int128Size {"}}, "tpncounter", "v4:_base_total_of_16_bytes_in_a_bin_16"},
	{"tpncounter/base total of 16 bytes", "6.7: a base total in a bin of another length is corrupt",
		[]edit{{"internal/wire/wire.go", "if c != msgpcode.Bin8 || n != int128Size {", "if c != msgpcode.Bin8 || n < int128Size {"}}, "tpncounter", "v4:_base_total_of_17_bytes"},
	{"tpncounter/base total an integer while it fits", "6.7: a base total that fits in int64 is written as an integer",
		[]edit{{"internal/wire/wire.go", "\tif x, ok := v.Int64(); ok {\n\t\te.Int(x)", "\tif x, ok := v.Int64(); false && ok {\n\t\te.Int(x)"}}, "tpncounter", "fold:_entries_retired_before_the_cutoff_move_into_the_base"},
	{"tpncounter/FutureSkew", "6.1, 6.3 step 1: a txn more than FutureSkew ahead is outside_window",
		[]edit{{"tpncounter/gcounter.go", "if g.o.FutureSkew > 0 {", "if false && g.o.FutureSkew > 0 {"}}, "tpncounter", "timed:_FutureSkew"},
	{"tpncounter/4096 per entry", "6.3 step 6: an entry holds at most 4096 txns",
		[]edit{{"tpncounter/gcounter.go", "len(p.ageOut)+1 > MaxEntriesPerActor {", "len(p.ageOut)+1 > 1<<30 {"}}, "tpncounter", "4096_transactions_in_one_entry"},
	// tally (SPEC.md 2.3, 3.2, 7)
	{"tally/MetroHash64 input", "7.2: the item's bytes are hashed with MetroHash64",
		[]edit{{"tally/distinct.go", "d.sk.Insert(item)", "d.sk.Insert(append([]byte{0}, item...))"}}, "tally", "hash/"},
	{"tally/encoder expires_at", "2.3: the shard encoder refuses expires_at ≤ 0",
		[]edit{{"tally/codec.go", "if s.ExpiresAt <= 0 {\n\t\treturn nil,", "if s.ExpiresAt < 0 {\n\t\treturn nil,"}}, "tally", "refusal/shard_expires_at_zero"},
	{"tally/encoder folded_through", "2.3: the tally encoder refuses folded_through < 0",
		[]edit{{"tally/codec.go", "if t.FoldedThrough < 0 {\n\t\treturn nil,", "if false && t.FoldedThrough < 0 {\n\t\treturn nil,"}}, "tally", "refusal/tally_folded_through_negative"},
	{"tally/mean rounded once", "7.1: the mean is the exact quotient rounded once",
		[]edit{{"stats/summary.go", "m, _ := new(big.Rat).SetFrac(s.BigSum(), s.BigCount()).Float64()", "m := float64(s.Sum) / float64(s.Count)"}}, "tally", "moments/mean_rounded_once"},
	{"tally/variance exact", "7.1: the variance is exact, rounded once",
		[]edit{{"stats/summary.go", "v, _ := new(big.Rat).SetFrac(num, den).Float64()", "v := float64(num.Int64()) / float64(den.Int64())"}}, "tally", "moments/extremes"},
	{"tally/fixed-shape cap", "3.2: a fixed-shape header above 65536 is too_large",
		[]edit{{"internal/rowlog/rowlog.go", "const MaxFields = 1 << 16", "const MaxFields = 1<<31 - 1"}}, "tally", "fixed-shape_array_header_above_65536"},
	// envelope and primitives (SPEC.md 3)
	{"wire/envelope nominal cap", "3.2: the envelope header above 2^31-1 is too_large",
		[]edit{{"internal/wire/wire.go", "got, err := d.ArrayLen(math.MaxInt32)", "got, err := d.ArrayLen(math.MaxInt64)"}}, "envelope", "envelope_header_claims_2^31_elements"},
	{"wire/bin form before cap", "3.2: a bin header's form is checked before its cap",
		[]edit{{"internal/wire/wire.go", "\tif !d.minimalHeader(pos, n, 0, true) {",
			"\tif n > maxLen {\n\t\treturn nil, fmt.Errorf(\"%w: bin\", crdt.ErrTooLarge)\n\t}\n\tif !d.minimalHeader(pos, n, 0, true) {"}}, "deltalog", "id_of_17_bytes_as_bin16"},
	// deltalog (SPEC.md 8)
	{"deltalog/fixed-shape cap", "3.2: a cell body header above 65536 is too_large",
		[]edit{{"internal/rowlog/rowlog.go", "const MaxFields = 1 << 16", "const MaxFields = 1<<31 - 1"}}, "deltalog", "cell_body_header_above_65536_fields"},
	{"deltalog/re-encode check", "8.2: only the canonical re-encoding decodes (with lax primitives, as a port might have)",
		[]edit{
			{"deltalog/cell.go", "err != nil || !bytes.Equal(canon, data)", "false && (err != nil || !bytes.Equal(canon, data))"},
			{"internal/wire/wire.go", "func (d *Decoder) minimalHeader(pos, n int, fix uint64, has8 bool) bool {", "func (d *Decoder) minimalHeader(pos, n int, fix uint64, has8 bool) bool {\n\treturn true\n}\n\nfunc (d *Decoder) minimalHeaderUnused(pos, n int, fix uint64, has8 bool) bool {"},
			{"internal/wire/wire.go", "if !smallest {", "if false && !smallest {"},
			{"internal/wire/wire.go", "if u <= math.MaxUint32 {", "if false && u <= math.MaxUint32 {"},
		}, "deltalog", "non-canonical_kind_(uint8_r)"},
	{"deltalog/mean rounded once", "8.3 (7.1): a read's mean is the exact quotient rounded once, not double(sum)/double(count)",
		[]edit{{"stats/summary.go", "m, _ := new(big.Rat).SetFrac(s.BigSum(), s.BigCount()).Float64()", "m := float64(s.Sum) / float64(s.Count)"}}, "deltalog", "moments/mean_rounded_once"},
	{"deltalog/merge cell where it fits", "8.3: the merge cell goes at the newest cell whose aggregate fits a cell",
		[]edit{{"deltalog/log.go", "acc.Fits() && prefix[j].Kind == KindRegular", "prefix[j].Kind == KindRegular"}}, "deltalog", "exact_sums_past_int64:_reads_clamp,_the_merge_cell_goes_where_it_fits"},
	{"deltalog/read exact past int64", "8.3: a read's sum past int64 is exact, clamped where an int64 is asked for",
		[]edit{{"stats/summary.go", "if !countFits || !sumFits || w.sqTop > 0 {", "if !countFits || w.sqTop > 0 || sumFits && !sumFits {"}}, "deltalog", "sum_past_int64_and_back:_one_merge_cell_covers_everything"},
	{"deltalog/read exact past 2^128", "8.3: a read's sum of squares past 2^128 is exact",
		[]edit{{"stats/summary.go", "\tif !ok {\n\t\tw.sqTop++\n\t}", "\tif !ok {\n\t\tw.sqTop += 0\n\t}"}}, "deltalog", "sum_of_squares_past_2^128:_the_merge_cell_stops_below_it"},
	{"deltalog/empty log has no mean", "8.3: an empty log has no mean and no variance",
		[]edit{{"stats/summary.go", "\tif s.Count == 0 {\n\t\treturn 0, false\n\t}\n\tm, _ :=", "\tif s.Count == 0 {\n\t\treturn 0, true\n\t}\n\tm, _ :="}}, "deltalog", "moments/empty"},
	{"deltalog/window before delta", "8.4: the window is checked before the delta",
		[]edit{{"deltalog/counters.go", "if err := rowlog.InWindow(e.Row.ID, now, c.opts.Window, c.opts.FutureSkew); err != nil {", "if e.Row.Delta == 0 {\n\t\t\treturn ID{}, 0, store.Mutation{}, crdt.ErrInvalidAmount\n\t\t}\n\t\tif err := rowlog.InWindow(e.Row.ID, now, c.opts.Window, c.opts.FutureSkew); err != nil {"}}, "deltalog", "b4cc8000-a838-11ee-8009-000000000009"},
	{"deltalog/delta before repeat", "8.4: the delta is judged before a repeated (counter, id)",
		[]edit{{"deltalog/counters.go", "\t\tm, err := cellMutation(e.Partition, e.Row) // validates the cell\n", "\t\tfor _, o := range es {\n\t\t\tif o.Partition == e.Partition && o.Row.ID == e.Row.ID && o.Row.Delta != e.Row.Delta {\n\t\t\t\treturn ID{}, 0, store.Mutation{}, crdt.ErrConflictingTransaction\n\t\t\t}\n\t\t}\n\t\tm, err := cellMutation(e.Partition, e.Row) // validates the cell\n"}}, "deltalog", "batch/a_zero_delta_is_invalid_amount_before"},
	// balance (SPEC.md 9)
	{"balance/amount before window", "9.3: the amount is checked before the window",
		[]edit{{"balance/accounts.go", "if err := m.Row.Validate(); err != nil {", "if err := m.Row.Validate(); err != nil && !m.Row.UpdateID.Time().Before(now.Add(-ac.opts.Window)) {"}}, "balance", "b4cc8000-a838-11ee-8009-000000000009"},
	{"balance/settled S target amount", "9.2 step 3: a settled merge cancels an S row only with its amount",
		[]edit{{"balance/evaluate.go", "hit && ((t.Target == KindNormal && !brokenAmountClaims) || r.Amount == t.Amount)", "hit"}}, "balance", "settled_merge_ignores_an_S_row_of_another_amount"},
	// ledger transaction records (SPEC.md 6.11 "Key" and "Encoding", 3.4)
	{"ledger/key hash input order", "6.11 Key: SHA-256 of account, 0x00, txn, in that order",
		[]edit{{"internal/txnrec/txnrec.go", "append(append(append(in[:0], account...), 0), txn...)", "append(append(append(in[:0], txn...), 0), account...)"}}, "ledger", "key/\"acct\"_\"t1\""},
	{"ledger/key separator byte", "6.11 Key: account and txn are separated by the byte 0x00",
		[]edit{{"internal/txnrec/txnrec.go", "account...), 0), txn...)", "account...), '/'), txn...)"}}, "ledger", "key/\"acct\"_\"t1\""},
	{"ledger/key prefix", "6.11 Key: the prefix counterkit.txn/",
		[]edit{{"internal/txnrec/txnrec.go", "const Prefix = \"counterkit.txn/\"", "const Prefix = \"counterkit.txn:\""}}, "ledger", "key/\"acct\"_\"t1\""},
	{"ledger/key base32 alphabet", "6.11 Key: base32 in the extended-hex alphabet 0-9A-V",
		[]edit{{"internal/txnrec/txnrec.go", "base32.HexEncoding.WithPadding(base32.NoPadding)", "base32.StdEncoding.WithPadding(base32.NoPadding)"}}, "ledger", "key/\"acct\"_\"t1\""},
	{"ledger/key 20 bytes of the hash", "6.11 Key: the first 20 bytes of the hash, 47 bytes in all",
		[]edit{{"internal/txnrec/txnrec.go", "sum[:20]", "sum[:19]"}}, "ledger", "key/\"acct\"_\"t1\""},
	{"ledger/record txn id valid", "6.11 Encoding: an invalid transaction id is corrupt",
		[]edit{
			{"internal/txnrec/txnrec.go", "if x.Txn, err = d.Txn(); err != nil {", "if s, e := d.String(crdt.MaxIDLen); e != nil {\n\t\treturn e\n\t} else if x.Txn = crdt.TxnID(s); false {"},
			{"internal/txnrec/txnrec.go", "if err := r.Txn.Validate(); err != nil {", "if err := r.Txn.Validate(); false && err != nil {"},
		}, "ledger", "invalid/a_control_character_in_the_id"},
	{"ledger/record writer id valid", "6.11 Encoding: an invalid writer id is corrupt",
		[]edit{
			{"internal/txnrec/txnrec.go", "if x.Writer, err = d.Actor(); err != nil {", "if s, e := d.String(crdt.MaxIDLen); e != nil {\n\t\treturn e\n\t} else if x.Writer = crdt.ActorID(s); false {"},
			{"internal/txnrec/txnrec.go", "if err := r.Writer.Validate(); err != nil {", "if err := r.Writer.Validate(); false && err != nil {"},
		}, "ledger", "invalid/an_empty_writer"},
	{"ledger/record amount 0", "6.11 Encoding: an amount of 0 is corrupt",
		[]edit{{"internal/txnrec/txnrec.go", "if r.Amount == 0 || r.Amount == math.MinInt64 {", "if r.Amount == math.MinInt64 {"}}, "ledger", "invalid/a_zero_amount"},
	{"ledger/record amount -2^63", "6.11 Encoding: an amount of -2^63 is corrupt",
		[]edit{{"internal/txnrec/txnrec.go", "if r.Amount == 0 || r.Amount == math.MinInt64 {", "if r.Amount == 0 || false && r.Amount == math.MinInt64 {"}}, "ledger", "invalid/the_amount_-2^63"},
	{"ledger/record at 0", "6.11 Encoding: at of 0 is corrupt",
		[]edit{{"internal/txnrec/txnrec.go", "return n > 0 && time.Unix(0, n).Equal(t)", "return n >= 0 && time.Unix(0, n).Equal(t)"}}, "ledger", "invalid/a_time_of_0"},
	{"ledger/record at before 1970", "6.11 Encoding: at below 0 is corrupt",
		[]edit{{"internal/txnrec/txnrec.go", "return n > 0 && time.Unix(0, n).Equal(t)", "return n != 0 && time.Unix(0, n).Equal(t)"}}, "ledger", "invalid/a_time_before_1970"},
	{"ledger/record time that wraps", "2.3: an encoder refuses a time whose Unix nanoseconds wrap",
		[]edit{{"internal/txnrec/txnrec.go", "return n > 0 && time.Unix(0, n).Equal(t)", "return n > 0"}}, "ledger", "refused/a_time_in_1600,_whose_Unix_nanoseconds_wrap_to_2184"},
	{"ledger/record version 0", "6.11 Encoding: version 0 is corrupt",
		[]edit{{"internal/txnrec/txnrec.go", "if r.Version == 0 {", "if false && r.Version == 0 {"}}, "ledger", "invalid/version_0"},
	{"ledger/record five fields", "6.11 Encoding: a body array of another length is corrupt",
		[]edit{{"internal/txnrec/txnrec.go", "if err := d.Tuple(4+int(format), \"transaction record\"); err != nil {", "if _, err := d.ArrayLen(1 << 20); err != nil {"}}, "ledger", "invalid/an_array_header_of_4_before_five_fields"},
	{"ledger/record encoder unchecked", "2.3: an encoder refuses a record no decoder accepts",
		[]edit{{"internal/txnrec/txnrec.go", "if err := r.check(); err != nil {\n\t\treturn nil, err", "if err := r.check(); false && err != nil {\n\t\treturn nil, err"}}, "ledger", "refused/a_zero_amount"},
	{"ledger/record trailing bytes", "6.11 Encoding (3.2): bytes after the body are corrupt",
		[]edit{{"internal/txnrec/txnrec.go", "\tif err := d.Finish(); err != nil {\n\t\treturn err\n\t}\n\tx.At", "\tif err := d.Finish(); false && err != nil {\n\t\treturn err\n\t}\n\tx.At"}}, "ledger", "invalid/a_trailing_byte"},
	{"ledger/record version 1 only", "6.11 Encoding, 3.4: format version 2 is unsupported_version",
		[]edit{{"internal/txnrec/txnrec.go", "wire.NewDecoder(b, crdt.TagLedgerTxn, newestFormat, maxEncoded)", "wire.NewDecoder(b, crdt.TagLedgerTxn, newestFormat+1, maxEncoded)"}}, "ledger", "invalid/format_version_3"},
	{"ledger/record size cap", "3.4: a ledger.txn encoding above 829 bytes is too_large",
		[]edit{{"internal/txnrec/txnrec.go", "const maxEncoded = 2*crdt.MaxIDLen + crdt.MaxKeyLen + 64", "const maxEncoded = 2*crdt.MaxIDLen + crdt.MaxKeyLen + 65"}}, "ledger", "invalid/830_bytes"},
	{"ledger/record size cap at 829", "3.4: the ledger.txn cap is 829 bytes, not less",
		[]edit{{"internal/txnrec/txnrec.go", "const maxEncoded = 2*crdt.MaxIDLen + crdt.MaxKeyLen + 64", "const maxEncoded = 2*crdt.MaxIDLen + crdt.MaxKeyLen + 63"}}, "ledger", "invalid/829_bytes"},
	// msgpack smallest forms, decode caps (SPEC.md 3.2, 5.4, 6.7)
	{"envelope/uint32 smallest form", "3.2: an integer in uint32 that fits uint16 is corrupt",
		[]edit{{"internal/wire/wire.go", "if !smallest {", "if !smallest && c != 0xce {"}}, "envelope", "count_65535_as_uint32"},
	{"envelope/int16 smallest form", "3.2: an integer in int16 that fits int8 or a fixint is corrupt",
		[]edit{{"internal/wire/wire.go", "if !smallest {", "if !smallest && c != 0xd1 {"}}, "envelope", "tally_sum_-128_as_int16"},
	{"envelope/int32 smallest form", "3.2: an integer in int32 that fits int16 is corrupt",
		[]edit{{"internal/wire/wire.go", "if !smallest {", "if !smallest && c != 0xd2 {"}}, "envelope", "tally_sum_-32768_as_int32"},
	{"envelope/int64 smallest form", "3.2: an integer in int64 that fits int32 is corrupt",
		[]edit{{"internal/wire/wire.go", "if !smallest {", "if !smallest && c != 0xd3 {"}}, "envelope", "tally_sum_-2147483648_as_int64"},
	{"envelope/str16 smallest form", "3.2: a string below 256 bytes in str16 is corrupt",
		[]edit{{"internal/wire/wire.go", "if !d.minimalHeader(pos, n, 32, true) {", "if !d.minimalHeader(pos, n, 32, true) && c != msgpcode.Str16 {"}}, "envelope", "actor_of_255_bytes_as_str16"},
	{"pncounter/v2 decode cap per half", "5.4: a half of more than 65536 actors is too_large on decode",
		[]edit{{"pncounter/codec.go", "if *actors++; *actors > gcounter.MaxMergedActors {", "if *actors++; *actors > gcounter.MaxMergedActors+1 {"}}, "pncounter", "generated_decode/65537_actors_in_P"},
	{"pncounter/v2 decode cap not on rows", "5.4: the cap is per half: 131072 rows split between the halves decode",
		[]edit{{"pncounter/codec.go", "\tn, err := d.ArrayLen(MaxRows)", "\tn, err := d.ArrayLen(gcounter.MaxMergedActors)"}}, "pncounter", "65536_actors_in_P_and_65536_others_in_N"},
	{"pncounter/v1 decode cap", "5.5: a version 1 half of 65537 pairs is too_large from its header",
		[]edit{{"pncounter/codec.go", "err := d.ActorCounts(gcounter.MaxMergedActors, g.Grow", "err := d.ActorCounts(MaxRows, g.Grow"}}, "pncounter", "v1:_P_of_65537_pairs"},
	{"pncounter/decoder not capped by MaxActors", "5.4: a half past 30000 actors (a merge's) decodes",
		[]edit{{"pncounter/codec.go", "if errors.Is(err, crdt.ErrOverflow) || errors.Is(err, crdt.ErrTooLarge) {", "if errors.Is(err, crdt.ErrOverflow) {"}}, "pncounter", "generated_decode/30001_actors_in_P"},
	{"tgcounter/seq at most 2^63-1", "6.7: seq above 2^63-1 is corrupt",
		[]edit{{"tpncounter/codec.go", "\t\tif seq > MaxSeq {", "\t\tif false && seq > MaxSeq {"}}, "tpncounter", "seq_2^63"},
	{"tgcounter/txns per entry", "6.7: a folded array longer than 4096 minus the txns read is too_large",
		[]edit{{"tpncounter/codec.go", "if m, err = d.ArrayLen(MaxEntriesPerActor - nh); err != nil {", "if m, err = d.ArrayLen(MaxEntriesPerActor); err != nil {"}}, "tpncounter", "folded_longer_than_4096_minus_the_history"},
	{"tgcounter/txns per entry bound", "6.7: a folded array of exactly 4096 minus the txns read passes the cap",
		[]edit{{"tpncounter/codec.go", "if m, err = d.ArrayLen(MaxEntriesPerActor - nh); err != nil {", "if m, err = d.ArrayLen(MaxEntriesPerActor - nh - 1); err != nil {"}}, "tpncounter", "folded_of_4095_after_one_txn,_bytes_missing"},
	{"tgcounter/decoder not capped by MaxActors", "6.7: live entries past MaxActors decode",
		[]edit{{"tpncounter/codec.go", "\tg.installDecoded()\n\treturn nil", "\tif g.live() > g.o.MaxActors {\n\t\treturn crdt.ErrTooLarge\n\t}\n\tg.installDecoded()\n\treturn nil"}}, "tpncounter", "4097_live_entries_and_one_retired"},
	{"tgcounter/decoder not capped at 65536 retired", "6.7 (6.10): 65537 retired entries, as retiring one by one writes, decode",
		[]edit{{"tpncounter/codec.go", "\tg.installDecoded()\n\treturn nil", "\tif g.nretired > MaxRetired {\n\t\treturn crdt.ErrTooLarge\n\t}\n\tg.installDecoded()\n\treturn nil"}}, "tpncounter", "65537_retired_entries"},
	{"tgcounter/entry bound", "6.7: a header above 131072 entries is too_large",
		[]edit{{"tpncounter/codec.go", "r.d.ArrayLen(maxEntries + b2i(r.version >= 4))", "r.d.ArrayLen(maxEntries + 1 + b2i(r.version >= 4))"}}, "tpncounter", "more_than_131072_entries"},
	{"tgcounter/entry bound and the base", "6.7: version 4 allows one more, for the base",
		[]edit{{"tpncounter/codec.go", "r.d.ArrayLen(maxEntries + b2i(r.version >= 4))", "r.d.ArrayLen(maxEntries)"}}, "tpncounter", "v4:_a_base_and_131072_entries,_bytes_missing"},
	// tgcounter, tpncounter rules (SPEC.md 6.2, 6.4)
	{"tgcounter/no time in 2262", "6.2: a TxnTime in 2262 is no time (invalid_txn)",
		[]edit{{"tpncounter/gcounter.go", "at.Year() > 2261", "at.Year() > 2262"}}, "tpncounter", "timed:_a_time_in_2262_is_no_time"},
	{"tgcounter/2261 is a time", "6.2: a TxnTime in 2261 is a time",
		[]edit{{"tpncounter/gcounter.go", "at.Year() > 2261", "at.Year() > 2260"}}, "tpncounter", "timed:_a_time_in_2262_is_no_time"},
	{"tgcounter/owner by bytes, not length", "6.4: the owner is the smallest actor id in byte order",
		[]edit{{"tpncounter/index.go", "\treturn ae.actor < be.actor\n}", "\tif len(ae.actor) != len(be.actor) {\n\t\treturn len(ae.actor) < len(be.actor)\n\t}\n\treturn ae.actor < be.actor\n}"}}, "tpncounter", "owner:_a_shorter_id_is_not_smaller"},
	{"tgcounter/owner by bytes, not UTF-16", "6.4: the owner is the smallest actor id in byte order",
		[]edit{{"tpncounter/index.go", "import (", "import (\n\tu16x \"unicode/utf16\"\n\tslicesx \"slices\""}, {"tpncounter/index.go", "\treturn ae.actor < be.actor\n}", "\treturn slicesx.Compare(u16x.Encode([]rune(string(ae.actor))), u16x.Encode([]rune(string(be.actor)))) < 0\n}"}}, "tpncounter", "owner:_byte_order,_not_UTF-16_order"},
	{"tpncounter/owner across halves by bytes", "6.4: across halves the owners compare by actor bytes",
		[]edit{{"tpncounter/rules.go", "\treturn ne.actor < pe.actor\n}", "\tif len(ne.actor) != len(pe.actor) {\n\t\treturn len(ne.actor) < len(pe.actor)\n\t}\n\treturn ne.actor < pe.actor\n}"}}, "tpncounter", "owner_across_halves:_a_shorter_id_is_not_smaller"},
	{"tpncounter/status: P first", "6.6: the status is the larger of the halves",
		[]edit{{"tpncounter/counter.go", "\t\treturn max(s, c.n.Status(txn))", "\t\treturn s"}}, "tpncounter", "status_is_the_larger_of_the_halves"},
	{"tpncounter/status: N first", "6.6: the status is the larger of the halves",
		[]edit{{"tpncounter/counter.go", "\tif s := c.p.Status(txn); s != Unknown {\n\t\treturn max(s, c.n.Status(txn))\n\t}\n\treturn c.n.Status(txn)", "\tif s := c.n.Status(txn); s != Unknown {\n\t\treturn s\n\t}\n\treturn c.p.Status(txn)"}}, "tpncounter", "status_is_the_larger_of_the_halves"},
	{"tpncounter/retire all or nothing across halves", "6.10: Retire retires the actor's live entries in both halves or neither",
		[]edit{{"tpncounter/retire.go", "\t\t\tr, ok, err := g.retired(e, group, late, at)\n\t\t\tif err != nil || !ok {\n\t\t\t\treturn false, err\n\t\t\t}", "\t\t\tr, ok, err := g.retired(e, group, late, at)\n\t\t\tif err != nil || !ok {\n\t\t\t\tfor _, s := range swaps {\n\t\t\t\t\ts.g.swap(s.actor, s.from, s.to)\n\t\t\t\t}\n\t\t\t\treturn len(swaps) > 0, err\n\t\t\t}"}}, "tpncounter", "retire:_both_halves_or_neither"},
	{"tpncounter/retire sees the other half", "6.10: a txn the other half holds declines Retire",
		[]edit{{"tpncounter/retire.go", "\t\tif g.twin != nil && g.twin.get(id) != 0 && !brokenRetireShared {", "\t\tif false && g.twin != nil && g.twin.get(id) != 0 && !brokenRetireShared {"}}, "tpncounter", "retire:_both_halves_or_neither"},
	{"tpncounter/unfold the losing folded copy across halves", "6.6: compaction unfolds a folded copy whose owner is in the other half",
		[]edit{{"tpncounter/rules.go", "\t\tcase off < e.nf():\n\t\t\tif !slices.Contains(p.unfold, off) {", "\t\tcase off < e.nf() && false:\n\t\t\tif !slices.Contains(p.unfold, off) {"}}, "tpncounter", "conflict_across_halves:_the_losing_folded_copy_is_unfolded"},
	{"tpncounter/forgetting waits for the other half", "6.6: compaction does not forget a copy of a txn the other half holds",
		[]edit{{"tpncounter/rules.go", "\t\tcase !g.twinOwns(r, tr):\n\t\t\tkeep = append(keep, off)", "\t\tcase !g.twinOwns(r, tr):\n\t\t\t_ = off"}}, "tpncounter", "conflict_across_halves:_forgetting_waits_for_the_other_half"},
	{"tpncounter/duplicate_folded across halves", "6.6: a retry of the owner's amount is duplicate_folded when the owner is folded, in either half",
		[]edit{{"tpncounter/counter.go", "\t\treturn duplicate(o.Folded), nil", "\t\treturn duplicate(o.Folded && amount > 0), nil"}}, "tpncounter", "conflict_across_halves:_a_folded_debit_owner_answers_duplicate_folded"},
	// tpncounter's Apply cap (SPEC.md 6.3 step 3): the bound and the comparison
	{"tpncounter/Apply cap bound one byte short", "6.3 step 3: a transaction counts len(actor) + len(txn) + 59 bytes",
		[]edit{{"tpncounter/limits.go", "len(actor) + 3*9 + 2*3\n", "len(actor) + 3*9 + 2*3 - 1\n"}}, "tpncounter", "size_cap:_one_byte_short"},
	{"tpncounter/Apply cap refuses at the edge", "6.3 step 3: refused only when the sum passes MaxEncodedSize - 64",
		[]edit{{"tpncounter/limits.go", "\tif bound <= limit {\n", "\tif bound < limit {\n"}, {"tpncounter/limits.go", "\treturn exact <= limit\n", "\treturn exact < limit\n"}}, "tpncounter", "size_cap:_at_the_edge"},
	// tpncounter Compact (SPEC.md 6.6): both plans and seq checks before either half changes
	{"tpncounter/compact all or nothing across halves", "6.6: when N's half fails, P's plan is not carried out either",
		[]edit{
			{"tpncounter/counter.go", "\t\t\tjobs = append(jobs, job{g, e, p})\n", "\t\t\tg.commit(e, p)\n\t\t\tg.bump(e)\n\t\t\tjobs = append(jobs, job{g, e, p})\n"},
			{"tpncounter/counter.go", "\tfor _, j := range jobs {\n\t\tj.g.commit(j.e, j.p)\n\t\tj.g.bump(j.e)\n\t\tj.g.grown += changeBound\n\t}\n", ""},
		}, "tpncounter", "compact:_all_or_nothing_across_halves"},
	{"tpncounter/compact seq check", "6.6: a half with a non-empty plan at seq MaxSeq is overflow",
		[]edit{{"tpncounter/counter.go", "\t\tif !p.empty() {\n\t\t\tif err := e.checkSeq(); err != nil {", "\t\tif !p.empty() {\n\t\t\tif err := e.checkSeq(); false && err != nil {"}}, "tpncounter", "compact:_all_or_nothing_across_halves"},
	{"tpncounter/compact seq check only for a plan", "6.6: a half with nothing to do is not checked for MaxSeq",
		[]edit{{"tpncounter/counter.go", "\t\tif !p.empty() {\n\t\t\tif err := e.checkSeq(); err != nil {\n\t\t\t\treturn false, err\n\t\t\t}\n\t\t\tjobs = append(jobs, job{g, e, p})\n\t\t}\n", "\t\tif err := e.checkSeq(); err != nil {\n\t\t\treturn false, err\n\t\t}\n\t\tif !p.empty() {\n\t\t\tjobs = append(jobs, job{g, e, p})\n\t\t}\n"}}, "tpncounter", "compact:_all_or_nothing_across_halves"},
	{"tpncounter/RetireAll totals as if retired one by one", "6.10 RetireAll: a shared txn counts once, in its owner's retired total",
		[]edit{
			{"tpncounter/retire.go", "case off >= e.nf() && owns:", "case off >= e.nf():"},
			{"tpncounter/retire.go", "case off < e.nf() && !owns:", "case false && off < e.nf() && !owns:"},
		}, "tpncounter", "retire:_RetireAll_counts_each_shared_transaction_once,_by_its_owner"},
	{"tpncounter/RetireAll with a txn in both halves", "6.10 RetireAll: declined when one of the group's txns is held in both halves",
		[]edit{{"tpncounter/retire.go", "if g.twin != nil && g.twin.get(id) != 0 && !brokenRetireShared {", "if false && g.twin != nil && g.twin.get(id) != 0 && !brokenRetireShared {"}}, "tpncounter", "retire:_RetireAll_counts_each_shared_transaction_once,_by_its_owner"},
	// tally (SPEC.md 7.1, 7.2.2)
	{"tally/variance rounded once", "7.1: the variance is the exact quotient rounded once",
		[]edit{{"stats/summary.go", "\tv, _ := new(big.Rat).SetFrac(num, den).Float64()\n\treturn v, true", "\ta, _ := new(big.Float).SetInt(num).Float64()\n\tb, _ := new(big.Float).SetInt(den).Float64()\n\treturn a / b, true"}}, "tally", "moments/variance_rounded_once"},
	{"tally/stats parity", "7.1: a sum of squares of another parity than the sum is corrupt",
		[]edit{{"internal/exact/stats.go", "\tif new(big.Int).Sub(sq, S).Bit(0) != 0 {", "\tif false && new(big.Int).Sub(sq, S).Bit(0) != 0 {"}}, "tally", "stats_sum_of_squares_of_the_wrong_parity"},
	{"tally/stats sum past int64 kept exactly", "7.1: stats combined past int64 keep the exact sum (clamped where an int64 is asked for)",
		[]edit{{"stats/summary.go", "if !countFits || !sumFits || w.sqTop > 0 {", "if !countFits || w.sqTop > 0 || sumFits && !sumFits {"}}, "tally", "stats_sum_past_int64:_the_read_is_exact"},
	{"tally/stats sum of squares past 2^128 kept exactly", "7.1: stats combined past 2^128 keep the exact sum of squares",
		[]edit{{"stats/summary.go", "\tif !ok {\n\t\tw.sqTop++\n\t}", "\tif !ok {\n\t\tw.sqTop += 0\n\t}"}}, "tally", "stats_sum_of_squares_past_2^128:_the_read_is_exact"},
	{"tally/sum clamps past int64", "7.1: a sum past int64 reads 2^63 - 1 or -2^63 where an int64 is asked for",
		[]edit{{"tally/aggregate.go", "func (s *Sum) Value() int64 { return s.val().Clamp() }", "func (s *Sum) Value() int64 { v, _ := s.val().Int64(); return v }"}}, "tally", "sum_below_int64:_the_read_is_exact"},
	{"tally/GC folds what the tally holds", "7.4: GC folds the longest run of final shards whose tally fits its encoding",
		[]edit{{"tally/counter.go", "final[i+1].ExpiresAt > s.ExpiresAt) && acc.fits() {", "final[i+1].ExpiresAt > s.ExpiresAt) {"}}, "tally", "sum_past_int64:_GC_folds_the_shards_whose_tally_fits"},
	{"tally/GC folds whole expires_at groups", "7.4: GC folds all the shards of one expires_at or none",
		[]edit{{"tally/counter.go", "(i+1 == len(final) || final[i+1].ExpiresAt > s.ExpiresAt) && acc.fits()", "acc.fits()"}}, "tally", "sum_past_int64:_GC_folds_whole_expires_at_groups"},
	{"tally/dense needs 4096 registers", "7.2.2: a dense array with fewer than 4096 registers set is corrupt",
		[]edit{{"tally/distinct.go", "\t\tif 4*nonzero < distinctRegisters {", "\t\tif 4*nonzero < distinctRegisters-4 {"}}, "tally", "distinct_dense_with_4095_registers_set"},
	// The HyperLogLog registers' upper bound (51, SPEC.md 7.2) has no
	// mutant: the library that holds the registers refuses a register
	// above 51 as well, so removing counterkit's check changes no result
	// ("distinct sparse register 52" and "distinct dense register 52"
	// still fail a port without it).
	{"tally/sparse register at least 1", "7.2: a sparse register of 0 is corrupt",
		[]edit{{"tally/distinct.go", "case r == 0 || r > distinctMaxRho:", "case r > distinctMaxRho:"}}, "tally", "distinct_sparse_register_0"},
	{"tally/sparse index in range", "7.2: a sparse index of 16384 or more is corrupt",
		[]edit{{"tally/distinct.go", "case i >= distinctRegisters:", "case false && i >= distinctRegisters:"}}, "tally", "distinct_sparse_index_16384"},
	{"tally/sparse indexes increasing", "7.2: sparse indexes strictly increase",
		[]edit{{"tally/distinct.go", "case i <= last:", "case false && i <= last:"}}, "tally", "distinct_sparse_indexes_not_increasing"},
	{"tally/dense at 4096 registers", "7.2.2: 4096 registers set is the dense form",
		[]edit{{"tally/distinct.go", "\t\tif 4*nonzero < distinctRegisters {", "\t\tif 4*nonzero <= distinctRegisters {"}}, "tally", "shard/distinct_dense_at_4096_registers"},
	// tally (SPEC.md 7.1 stats decoding; 7.4 the read's combining order).
	// For three or more values a sum outside its range also has no sum of
	// squares in [L, G], so only two values show the sum range on its own.
	{"tally/stats sum range", "7.1: the sum lies in [(count−1)·min + max, min + (count−1)·max], not [count·min, count·max]",
		[]edit{{"internal/exact/stats.go", "if r.Cmp(mul(d, m)) < 0 || r.Cmp(mul(d, M)) > 0 {", "if S.Cmp(mul(N, m)) < 0 || S.Cmp(mul(N, M)) > 0 {"}}, "tally", "stats_two_values_not_summing_to_min_+_max"},
	{"tally/stats least sum accepted", "7.1: a sum of (count−1)·min + max is valid",
		[]edit{{"internal/exact/stats.go", "if r.Cmp(mul(d, m)) < 0 || r.Cmp(mul(d, M)) > 0 {", "if r.Cmp(mul(d, m)) <= 0 || r.Cmp(mul(d, M)) > 0 {"}}, "tally", "shard/stats_at_the_least_sum ("},
	{"tally/stats greatest sum accepted", "7.1: a sum of min + (count−1)·max is valid",
		[]edit{{"internal/exact/stats.go", "if r.Cmp(mul(d, m)) < 0 || r.Cmp(mul(d, M)) > 0 {", "if r.Cmp(mul(d, m)) < 0 || r.Cmp(mul(d, M)) >= 0 {"}}, "tally", "shard/stats_at_the_greatest_sum ("},
	{"tally/stats L", "7.1: a sum of squares below L is corrupt",
		[]edit{{"internal/exact/stats.go", "case sq.Cmp(least) < 0:", "case false && sq.Cmp(least) < 0:"}}, "tally", "stats_sum_of_squares_below_the_least"},
	{"tally/stats L accepted", "7.1: a sum of squares equal to L is valid",
		[]edit{{"internal/exact/stats.go", "case sq.Cmp(least) < 0:", "case sq.Cmp(least) <= 0:"}}, "tally", "shard/stats_at_the_least_sum_of_squares"},
	{"tally/stats G", "7.1: a sum of squares above G is corrupt",
		[]edit{{"internal/exact/stats.go", "case sq.Cmp(greatest) > 0:", "case false && sq.Cmp(greatest) > 0:"}}, "tally", "stats_sum_of_squares_above_the_greatest"},
	{"tally/stats G accepted", "7.1: a sum of squares equal to G is valid",
		[]edit{{"internal/exact/stats.go", "case sq.Cmp(greatest) > 0:", "case sq.Cmp(greatest) >= 0:"}}, "tally", "shard/stats_at_the_greatest_sum_of_squares"},
	{"tally/stats L floors", "7.1: q = ⌊r/d⌋ rounds toward −∞, not toward zero",
		[]edit{{"internal/exact/stats.go", "q, k := new(big.Int).DivMod(r, d, new(big.Int))", "q, k := new(big.Int).QuoRem(r, d, new(big.Int))"}}, "tally", "stats_of_negatives,_sum_of_squares_below_the_least"},
	{"tally/GC order: expires_at first", "7.4: GC folds final shards in expires_at order, not by mutator",
		[]edit{{"tally/counter.go", "return cmp.Or(cmp.Compare(a.ExpiresAt, b.ExpiresAt), cmp.Compare(a.Mutator, b.Mutator))", "return cmp.Compare(a.Mutator, b.Mutator)"}}, "tally", "sum_past_int64:_GC_folds_the_shards_whose_tally_fits"},
	// deltalog, balance (SPEC.md 8.1, 8.3, 9.2)
	{"deltalog/RFC 4122 variant", "8.1: an id whose variant is not RFC 4122 is invalid_txn",
		[]edit{{"timeid/id.go", "if u.Version() != 1 || u.Variant() != uuid.RFC4122 {", "if u.Version() != 1 || id[8]&0x80 == 0 {"}}, "deltalog", "ids_of_another_variant_are_invalid_txn"},
	{"deltalog/MergeBefore strictly before", "8.3: MergeBefore takes the newest cell strictly before the cutoff",
		[]edit{{"deltalog/log.go", "return prefix[i].ID.Time().Before(cutoff) })", "return !prefix[i].ID.Time().After(cutoff) })"}}, "deltalog", "merge_before_a_cutoff_equal_to_a_cell's_time"},
	{"balance/smallest amount, not clustering order", "9.2 step 2: the smallest amount of an update id counts",
		[]edit{{"balance/evaluate.go", "\t\t\t\treturn ns[i].Amount < ns[j].Amount", "\t\t\t\treturn CompareRows(ns[i], ns[j]) < 0"}}, "balance", "a_reused_id's_amounts_200_and_100"},
	{"balance/smallest amount, not byte order", "9.2 step 2: the smallest amount of an update id counts",
		[]edit{{"balance/evaluate.go", "\t\t\t\treturn ns[i].Amount < ns[j].Amount", "\t\t\t\treturn string(ns[i].Version[:]) < string(ns[j].Version[:])"}}, "balance", "a_reused_id's_negative_amount_counts_over_a_positive_one"},
	// bounded (SPEC.md 13.2)
	{"bounded/merge config check", "13.2 Merge: another bound or origin is invalid_config",
		[]edit{{"bounded/counter.go", "\tif c.o.Bound != o.o.Bound || c.o.Origin != o.o.Origin {", "\tif false {"}}, "bounded", "merge_refuses_another_bound_or_origin"},
	{"bounded/merge checks the origin", "13.2 Merge: another origin is invalid_config",
		[]edit{{"bounded/counter.go", "\tif c.o.Bound != o.o.Bound || c.o.Origin != o.o.Origin {", "\tif c.o.Bound != o.o.Bound {"}}, "bounded", "merge_refuses_another_bound_or_origin"},
	{"bounded/merge checks the bound", "13.2 Merge: another bound is invalid_config",
		[]edit{{"bounded/counter.go", "\tif c.o.Bound != o.o.Bound || c.o.Origin != o.o.Origin {", "\tif c.o.Origin != o.o.Origin {"}}, "bounded", "merge_refuses_another_bound_or_origin"},
	{"bounded/available at least zero", "13.2: insufficient_rights reports max(0, rights)",
		[]edit{{"bounded/counter.go", "Available: max(0, c.Rights(actor))}", "Available: c.Rights(actor)}"}}, "bounded", "available_is_never_negative"},
	{"bounded/asked is received + n", "13.2 Request: asked becomes received + n",
		[]edit{{"bounded/counter.go", "\te.asked = w\n\treturn true, c.put(actor, e)", "\tif old != nil {\n\t\tw = old.asked + need\n\t}\n\te.asked = w\n\treturn true, c.put(actor, e)"}}, "bounded", "request_after_a_grant_beyond_what_was_asked"},
	{"bounded/request overflow", "13.2 Request: received + n that does not fit is overflow",
		[]edit{{"bounded/counter.go", "\tw, ok := want.Int64()\n\tif !ok {", "\tw, ok := want.Int64()\n\tif false && !ok {"}}, "bounded", "overflow_of_a_request"},
	{"bounded/received overflow", "13.2: an operation taking received past int64 is overflow",
		[]edit{{"bounded/counter.go", "dst = append(dst, c.recv[a], c.rights(a))", "dst = append(dst, exact.Int128{}, c.rights(a))"}}, "bounded", "overflow_of_what_one_actor_received"},
	{"bounded/rights computed exactly", "13.1: no partial sum of rights needs to fit (credits + received beyond int64 is fine)",
		[]edit{{"bounded/counter.go", "\tvar given exact.Int128\n", "\tfor _, a := range actors {\n\t\tif e := c.entries[a]; e != nil {\n\t\t\tp := c.recv[a]\n\t\t\tif p.Add(e.credits); !fitsInt64(p) {\n\t\t\t\treturn fmt.Errorf(\"%w: credits + received of %q\", crdt.ErrOverflow, a)\n\t\t\t}\n\t\t}\n\t}\n\tvar given exact.Int128\n"}}, "bounded", "rights_computed_exactly"},
	{"bounded/rights must fit", "13.2: an operation taking rights past int64 is overflow",
		[]edit{{"bounded/counter.go", "dst = append(dst, c.recv[a], c.rights(a))", "dst = append(dst, c.recv[a], exact.Int128{})"}}, "bounded", "rights_computed_exactly"},
	{"bounded/new actor beyond 4096", "13.2: a new actor beyond 4096 is too_large",
		[]edit{{"bounded/counter.go", "if old == nil && len(c.entries) >= MaxActors {", "if false && old == nil && len(c.entries) >= MaxActors {"}}, "bounded", "4096_actors"},
	{"bounded/new actor at 4096", "13.2: the 4096th actor is accepted",
		[]edit{{"bounded/counter.go", "if old == nil && len(c.entries) >= MaxActors {", "if old == nil && len(c.entries) >= MaxActors-1 {"}}, "bounded", "4096_actors"},
	{"bounded/merge past 4096 actors", "13.2 Merge: a union past 4096 actors is accepted",
		[]edit{{"bounded/counter.go", "if len(c.entries)+added > MaxMergedActors {", "if len(c.entries)+added > MaxActors {"}}, "bounded", "4096_actors"},
	{"bounded/decode past 4096 entries", "13.4: a state of 4097 entries decodes",
		[]edit{{"bounded/codec.go", "n, err := d.ArrayLen(MaxMergedActors)", "n, err := d.ArrayLen(MaxActors)"}}, "bounded", "generated_decode/4097_entries"},
	{"bounded/decode beyond 65536 entries", "13.4: an entries header above 65,536 is too_large",
		[]edit{{"bounded/codec.go", "n, err := d.ArrayLen(MaxMergedActors)", "n, err := d.ArrayLen(MaxMergedActors + 1)"}}, "bounded", "generated_decode/65537_entries"},
	{"bounded/decode at 65536 entries", "13.4: 65,536 entries decode",
		[]edit{{"bounded/codec.go", "n, err := d.ArrayLen(MaxMergedActors)", "n, err := d.ArrayLen(MaxMergedActors - 1)"}}, "bounded", "generated_decode/65536_entries"},
	{"bounded/merge order: debits", "13.2 Merge: on equal seq, debits decide after credits",
		[]edit{{"bounded/counter.go", "\tif c := cmp.Compare(a.debits, b.debits); c != 0 {", "\tif c := cmp.Compare(a.debits, b.debits); false && c != 0 {"}}, "bounded", "fork_decided_by_debits"},
	{"bounded/merge order: asked", "13.2 Merge: on equal seq, asked decides after debits",
		[]edit{{"bounded/counter.go", "\tif c := cmp.Compare(a.asked, b.asked); c != 0 {", "\tif c := cmp.Compare(a.asked, b.asked); false && c != 0 {"}}, "bounded", "fork_decided_by_asked"},
	{"bounded/merge order: sent pairs", "13.2 Merge: sent compares as (recipient, amount) pairs",
		[]edit{{"bounded/counter.go", "return cmp.Or(cmp.Compare(x.to, y.to), cmp.Compare(x.amount, y.amount))", "return cmp.Or(cmp.Compare(x.amount, y.amount), cmp.Compare(x.to, y.to))"}}, "bounded", "fork_decided_by_sent"},
	{"bounded/merge order: recent pairs", "13.2 Merge: recent compares as (id, amount) pairs",
		[]edit{{"bounded/counter.go", "return cmp.Or(cmp.Compare(x.ID, y.ID), cmp.Compare(x.Amount, y.Amount))", "return cmp.Or(cmp.Compare(x.Amount, y.Amount), cmp.Compare(x.ID, y.ID))"}}, "bounded", "fork_decided_by_recent"},
	// tally, deltalog (SPEC.md 7.1, 8.3): the variance as (double(n)·double(Σx²)
	// − double(Σx)²) / double(n)², each term rounded to a double first.
	{"tally/variance in doubles", "7.1: the variance is the exact quotient rounded once, not the all-double formula",
		[]edit{{"stats/summary.go", "\tv, _ := new(big.Rat).SetFrac(num, den).Float64()\n\treturn v, true", varianceInDoubles}}, "tally", "moments/variance_rounded_once:_the_double_formula_differs"},
	{"deltalog/variance in doubles", "8.3 (7.1): the variance is the exact quotient rounded once, not the all-double formula",
		[]edit{{"stats/summary.go", "\tv, _ := new(big.Rat).SetFrac(num, den).Float64()\n\treturn v, true", varianceInDoubles}}, "deltalog", "moments/variance_rounded_once:_the_double_formula_differs"},
	// bounded (SPEC.md 13.1, 13.2): each total's overflow, and the first
	// tie-breaker of a fork. Removing the debits check or Transfer's
	// sent[to] + n check leaves no mutant a vector can see: a wrapped debit
	// puts the value 2^64 above the true one, which never fits, a wrapped
	// sent[to] puts the giver's rights 2^64 above, and the total given
	// bounds every sent amount; an off-by-one at their limit is caught.
	// SPEC.md section 11 lists both among the rules without a mutant.
	{"bounded/credits overflow", "13.2 Apply: credits beyond 2^63-1 are overflow",
		[]edit{{"bounded/counter.go", "if e.credits > math.MaxInt64-amount {", "if false && e.credits > math.MaxInt64-amount {"}}, "bounded", "merge_past_int64"},
	{"bounded/credits of 2^63-1 accepted", "13.2 Apply: credits may reach 2^63-1",
		[]edit{{"bounded/counter.go", "if e.credits > math.MaxInt64-amount {", "if e.credits >= math.MaxInt64-amount {"}}, "bounded", "overflow_of_credits"},
	{"bounded/debits of 2^63-1 accepted", "13.2 Apply: debits may reach 2^63-1",
		[]edit{{"bounded/counter.go", "if e.debits > math.MaxInt64+amount {", "if e.debits >= math.MaxInt64+amount {"}}, "bounded", "overflow_of_debits"},
	{"bounded/sent of 2^63-1 accepted", "13.2 Transfer: sent[to] + n may reach 2^63-1",
		[]edit{{"bounded/counter.go", "if e.sent[i].amount > math.MaxInt64-amount {", "if e.sent[i].amount >= math.MaxInt64-amount {"}}, "bounded", "overflow_of_what_one_actor_gave_another"},
	{"bounded/value overflow", "13.2: an operation taking the value past int64 is overflow",
		[]edit{{"bounded/counter.go", "\tdst = append(dst, c.value)\n", "\tdst = append(dst, exact.Int128{})\n"}}, "bounded", "overflow_of_the_value"},
	{"bounded/further past int64", "13.2: an operation taking a total further past int64 is overflow",
		[]edit{{"bounded/counter.go", "if !fitsInt64(v) && d != (exact.Int128{}) && (d.Clamp() > 0) == (v.Clamp() > 0) {", "if fitsInt64(before[i]) && !fitsInt64(v) {"}}, "bounded", "merge_past_int64"},
	{"bounded/towards int64", "13.2: an operation moving a total past int64 back towards it applies",
		[]edit{{"bounded/counter.go", "if !fitsInt64(v) && d != (exact.Int128{}) && (d.Clamp() > 0) == (v.Clamp() > 0) {", "if !fitsInt64(v) && d != (exact.Int128{}) {"}}, "bounded", "merge_past_int64"},
	{"bounded/unchanged past int64", "13.2: an operation leaving a total past int64 where it is applies",
		[]edit{{"bounded/counter.go", "if !fitsInt64(v) && d != (exact.Int128{}) && (d.Clamp() > 0) == (v.Clamp() > 0) {", "if !fitsInt64(v) && (d.Clamp() >= 0) == (v.Clamp() > 0) {"}}, "bounded", "received_and_rights_past_int64"},
	{"bounded/merge past int64", "13.1, 13.2 Merge: a value past int64 is kept",
		[]edit{{"bounded/counter.go", "\t\tc.install(w.a, w.e) // totals past int64 are kept (SPEC.md 13.1)\n\t}\n", "\t\tc.install(w.a, w.e) // totals past int64 are kept (SPEC.md 13.1)\n\t}\n\tif !fitsInt64(c.value) {\n\t\treturn crdt.ErrOverflow\n\t}\n"}}, "bounded", "merge_past_int64"},
	{"bounded/total given overflow", "13.2: the total an entry gave beyond int64 is overflow",
		[]edit{{"bounded/counter.go", "\tif !fitsInt64(given) {\n\t\treturn fmt.Errorf(\"%w: rights %q gave\"", "\tif false {\n\t\treturn fmt.Errorf(\"%w: rights %q gave\""}}, "bounded", "overflow_of_the_total_one_actor_gave"},
	{"bounded/seq at its limit", "13.2: a change of an entry at seq 2^63-1 is overflow",
		[]edit{{"bounded/counter.go", "if e.seq == math.MaxInt64 {", "if false && e.seq == math.MaxInt64 {"}}, "bounded", "sequence_number_at_its_limit"},
	{"bounded/merge order: credits", "13.2 Merge: on equal seq, credits decide first",
		[]edit{{"bounded/counter.go", "\tif c := cmp.Compare(a.credits, b.credits); c != 0 {", "\tif c := cmp.Compare(a.credits, b.credits); false && c != 0 {"}}, "bounded", "fork_decided_by_credits"},
}

// varianceInDoubles replaces Summary.Variance's exact quotient by the
// all-double formula.
const varianceInDoubles = "\t_ = den\n\tfn, fs := float64(s.Count), float64(s.Sum)\n\tfq, _ := new(big.Float).SetInt(s.SumSquares()).Float64()\n\treturn (fn*fq - fs*fs) / (fn * fn), true"

func TestVectorMutants(t *testing.T) {
	if !*mutants {
		t.Skip("opt-in: go test ./vectors -run TestVectorMutants -mutants")
	}
	root := copyModule(t)
	for _, m := range vectorMutants {
		t.Run(m.name, func(t *testing.T) {
			originals := map[string][]byte{}
			for _, e := range m.edits {
				p := filepath.Join(root, e.file)
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				if _, ok := originals[p]; !ok {
					originals[p] = b
				}
				require.Equal(t, 1, strings.Count(string(b), e.old), "%s: the rule's text is not found once in %s: update the mutant", m.name, e.file)
				require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), e.old, e.new, 1)), 0o644))
			}
			defer func() {
				for p, b := range originals {
					require.NoError(t, os.WriteFile(p, b, 0o644))
				}
			}()
			cmd := exec.Command("go", "test", "-count=1", "-run", "TestVectors$/^"+m.vectors+"$", "./vectors")
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%s (SPEC.md %s): no vector failed without the rule\n%s", m.name, m.rule, out)
			require.NotContains(t, string(out), "[build failed]", "%s: the mutant does not build\n%s", m.name, out)
			require.Contains(t, string(out), m.want, "%s: the expected vector did not fail\n%s", m.name, out)
		})
	}
}

// copyModule copies the module (the repository root, without its dot
// directories and test binaries) to a temporary directory, where each
// mutant edits its files, runs go test ./vectors and restores them.
func copyModule(t *testing.T) string {
	root := t.TempDir()
	require.NoError(t, filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != repoRoot {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || strings.HasSuffix(path, ".test") {
			return nil
		}
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	}))
	return root
}

// TestMutantsFindTheirRules runs on every go test: each mutant of
// TestVectorMutants and TestDriverVectorMutants must find the text it
// edits exactly once (after the mutant's earlier edits), so a rule that
// moved is noticed without the opt-in runs, which rebuild the module.
func TestMutantsFindTheirRules(t *testing.T) {
	all := make([]vectorMutant, 0, len(vectorMutants)+len(dvMutants))
	all = append(all, vectorMutants...)
	for _, m := range dvMutants {
		all = append(all, vectorMutant{name: "driver " + m.name, edits: []edit{{m.file, m.old, m.new}}})
	}
	require.Greater(t, len(all), 100)
	require.Empty(t, mutantProblems(all, func(file string) ([]byte, error) {
		return os.ReadFile(filepath.Join(repoRoot, file))
	}))

	// A mutant whose rule moved is reported.
	moved := []vectorMutant{{name: "moved", edits: []edit{{"gcounter/gcounter.go", "if len(c.entries) >= MaxActors+1 {", ""}}}}
	require.Equal(t, []string{"moved: the rule's text occurs 0 times in gcounter/gcounter.go"}, mutantProblems(moved, func(file string) ([]byte, error) {
		return os.ReadFile(filepath.Join(repoRoot, file))
	}))
}

// mutantProblems lists the mutants whose edits do not each find their
// text exactly once.
func mutantProblems(ms []vectorMutant, read func(file string) ([]byte, error)) []string {
	var out []string
	for _, m := range ms {
		texts := map[string]string{}
		for _, e := range m.edits {
			text, ok := texts[e.file]
			if !ok {
				b, err := read(e.file)
				if err != nil {
					out = append(out, fmt.Sprintf("%s: %v", m.name, err))
					break
				}
				text = string(b)
			}
			if n := strings.Count(text, e.old); n != 1 {
				out = append(out, fmt.Sprintf("%s: the rule's text occurs %d times in %s", m.name, n, e.file))
				break
			}
			texts[e.file] = strings.Replace(text, e.old, e.new, 1)
		}
	}
	return out
}
