package vectors

// Driver protocol vectors of the bounded Account (SPEC.md 13.5, 11.1):
// driver_bounded.json. The file has the format of the other driver files
// over a sibling store (10.1), with the Accounts listed in `ledgers` and
// named by each step's `ledger`; ops credit, debit, transfer (to), sync,
// value and close (to: the heir). Replaying runs bounded.Account over the
// scripted store; dvModelBounded re-derives every put and result from
// SPEC.md 13.5 with the plain bounded model of bounded_test.go
// (boundedModel), which shares no code with package bounded.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
)

// dvBState is a decoded bounded counter (SPEC.md 13.4) as a put or a
// sibling of driver_bounded.json shows it: the entries, and the value,
// rights and outstanding requests they give.
type dvBState struct {
	Value       string            `json:"value"`
	Rights      map[string]string `json:"rights"`
	Outstanding map[string]string `json:"outstanding,omitempty"`
	Entries     []bvEntry         `json:"entries"`
}

// dvbDecode decodes a bounded counter with the real decoder; nil if it
// does not decode.
func dvbDecode(b []byte, window int) *dvBState {
	c, err := bounded.Decode(b, window)
	if err != nil {
		return nil
	}
	st := bvDescribe(c)
	return &dvBState{Value: st.Value, Rights: st.Rights, Outstanding: st.Outstanding, Entries: st.Entries}
}

func dvRunBounded(v dvVector, replay bool) (dvVector, error) {
	rec := &dvRec{replay: replay}
	st := &dvSiblings{rec: rec}
	if !replay {
		st.back, st.hist = map[string]*memory.Siblings{}, map[string][]dvSibState{}
	}
	o := v.Options
	if !replay && len(v.InitialSiblings) > 0 {
		// Written before the accounts exist, so they name no incarnation.
		ctx := context.Background()
		b := st.backing(o.Key)
		for _, sb := range v.InitialSiblings {
			if err := b.Put(ctx, o.Key, "init", dvUnhex(sb.Value), nil); err != nil {
				return dvVector{}, err
			}
		}
		vals, tok, err := b.Fetch(ctx, o.Key)
		if err != nil {
			return dvVector{}, err
		}
		st.hist[o.Key] = []dvSibState{{vals, tok}}
	}
	if o.Keep == nil {
		return dvVector{}, errors.New("options: keep is required")
	}
	accounts := map[string]*bounded.Account{}
	var actual, vector [][]byte
	now := dvT0 // a step's clock moves it
	for _, d := range v.Ledgers {
		opts := dvBoundedOptions(o, crdt.ActorID(d.Actor))
		opts.Clock = func() time.Time { return now }
		a, err := bounded.Open(st, o.Key, opts)
		if err != nil {
			return dvVector{}, err
		}
		if len(a.Writer()) != len(d.Writer) || !strings.HasPrefix(d.Writer, d.Actor+"~") {
			return dvVector{}, fmt.Errorf("writer %q does not stand for %q", d.Writer, a.Writer())
		}
		accounts[d.Actor] = a
		actual, vector = append(actual, []byte(a.Writer())), append(vector, []byte(d.Writer))
	}
	swap := func(from, to [][]byte) func([]byte) []byte {
		return func(b []byte) []byte {
			for i := range from {
				b = bytes.ReplaceAll(b, from[i], to[i])
			}
			return b
		}
	}
	toVector, toActual := swap(actual, vector), swap(vector, actual)
	st.toActual, st.toVector = toActual, toVector
	norm := func(c dvCall) dvCall {
		c.Actor = string(toVector([]byte(c.Actor)))
		rec := bounded.IsRecordKey(c.Key) // a transaction record (SPEC.md 13.5, "Records")
		if c.Method == "put" {
			b := toVector(c.bytes())
			c.raw, c.Value = nil, hex.EncodeToString(b)
			if rec {
				c.Record = dvDecodeRecord(b)
			} else {
				c.Bounded = dvbDecode(b, o.Window)
			}
		}
		sibs := c.Siblings
		c.Siblings = nil
		for _, sb := range sibs {
			b := toVector(sb.bytes())
			nb := dvSibling{Value: hex.EncodeToString(b)}
			if rec {
				nb.Record = dvDecodeRecord(b)
			} else {
				nb.Bounded = dvbDecode(b, o.Window)
			}
			c.Siblings = append(c.Siblings, nb)
		}
		return c
	}
	ctx := context.Background()
	out := v
	out.Steps = nil
	for _, s := range v.Steps {
		s.recKey = o.Key // record faults (dvRecFaults) name the txn
		rec.begin(s)
		if s.Clock != "" {
			now = dvMustTime(s.Clock)
		}
		got := dvStep{Clock: s.Clock, Op: s.Op, Note: s.Note, Ledger: s.Ledger, Txn: s.Txn, Amount: s.Amount, To: s.To}
		a := accounts[s.Ledger]
		if a == nil {
			return dvVector{}, fmt.Errorf("step %q: unknown account %q", s.Op, s.Ledger)
		}
		amount := func() int64 {
			if s.Amount == nil {
				return 0
			}
			return int64(*s.Amount)
		}
		var res bounded.Result
		var err error
		result := true
		switch s.Op {
		case "credit":
			res, err = a.Credit(ctx, crdt.TxnID(s.Txn), amount())
		case "debit":
			res, err = a.Debit(ctx, crdt.TxnID(s.Txn), amount())
		case "transfer":
			res, err = a.Transfer(ctx, crdt.ActorID(toActual([]byte(s.To))), amount())
		case "close":
			res, err = a.Close(ctx, crdt.ActorID(toActual([]byte(s.To))))
		case "sync":
			result = false
			var c *bounded.Counter
			if c, err = a.Sync(ctx); err == nil {
				got.Value, got.Rights = dvI(c.Value()), dvI(c.Rights(a.Writer()))
			}
		case "value":
			result = false
			var n int64
			if n, err = a.Value(ctx); err == nil {
				got.Value = dvI(n)
			}
		default:
			return dvVector{}, fmt.Errorf("unknown bounded op %q", s.Op)
		}
		got.Error = dvKind(err)
		if result {
			if res.Outcome != 0 {
				got.Outcome = res.Outcome.String()
			}
			got.Attempts, got.Landed = res.Attempts, dvB(res.Landed)
			if res.Landed {
				got.Value, got.Rights, got.Granted = dvI(res.Value), dvI(res.Rights), dvI(res.Granted)
			}
			var short *bounded.InsufficientRightsError
			if errors.As(err, &short) {
				got.Available = dvI(short.Available)
				if s.Op == "debit" {
					got.Requested = dvI(res.Requested)
				}
			}
		}
		got.Pending = dvB(a.Pending())
		got.Calls = rec.ordered(norm)
		out.Steps = append(out.Steps, got)
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// The vectors.

var dvAccountsABC = []dvLedger{{Actor: "a", Writer: "a~aaaaaaaa"}, {Actor: "b", Writer: "b~bbbbbbbb"}, {Actor: "c", Writer: "c~cccccccc"}}

func dvbOptions(retries int, keep int64) dvOptions {
	return dvOptions{Key: dvLedgerKey, RetryCount: retries, Keep: dvI(keep), Window: 8}
}

// dvbOp is a step of account acct; faults are those of its store calls.
func dvbOp(op, acct, txn string, amount int64, faults ...string) dvStep {
	s := dvStep{Op: op, Ledger: acct, Txn: txn}
	if amount != 0 {
		s.Amount = dvI(amount)
	}
	return dvStepOf(s, faults...)
}

func dvbTo(op, acct, to string, amount int64, faults ...string) dvStep {
	s := dvbOp(op, acct, "", amount, faults...)
	s.To = to
	return s
}

func dvbNote(s dvStep, note string) dvStep { s.Note = note; return s }

// dvbVectorNames are the vectors of driver_bounded.json, in order.
const (
	dvbDuplicates    = "credit, duplicate and conflicting_transaction on the same and another Account"
	dvbAsk           = "a debit beyond rights asks for the shortfall"
	dvbAskNothing    = "a debit the whole balance is short of asks nothing"
	dvbGrant         = "grant: in actor order, keeping Keep; the debit then goes through and withdraws"
	dvbGrantAsking   = "grant: an asking account gives only to smaller requesters"
	dvbRefused       = "refused puts: the entry goes back, retried; all refused is unavailable"
	dvbAmbLanded     = "ambiguous put that landed"
	dvbAmbLost       = "ambiguous put lost, then refused: ambiguous_write; in doubt not spendable; the retry answers"
	dvbSettle        = "settle: the larger holder of a doubled credit takes its copy back"
	dvbSettleSpent   = "settle: a doubled credit whose rights the larger holder spent stays doubled"
	dvbNoWrite       = "nothing to do: no put"
	dvbTransferClose = "transfer and close: to the requests, then to the heir; calls after Close fail"
	dvbBadInput      = "bad input before any store call; a refused fetch ends the call"
	dvbCorrupt       = "a corrupt sibling stops every call; nothing is written over it"
	dvbPastInt64     = "past int64: the key stays readable and writable"
	dvbSettleAmount  = "settle: a copy of another amount is not taken back"
	dvbCloseWithdraw = "close: withdraws the account's own request"
	dvbTransferOnce  = "transfer: an ambiguous put is sent again, not given again"
	dvbCloseInDoubt  = "close: a credit in doubt goes to the heir too"
	dvbGrantPastMax  = "grant: a request whose rights would pass int64 is skipped"
	dvbRecSlid       = "records: a retry after its transaction left every window is a duplicate by its record"
	dvbRecRefused    = "records: a refused record put is ambiguous_write, and written before the next cycle"
	dvbRecVouch      = "records: a duplicate of another account's unrecorded copy writes its record"
	dvbRecHeld       = "records: a credit is held back while the account's writes in doubt fill its window"
	dvbRecLanded     = "records: a write in doubt is recorded once a read shows it landed"
	dvbRecOwnDoubt   = "records: a duplicate of another account's copy writes its record while the account's own copy is in doubt"
	dvbClockOutside  = "a clock outside 1970..2262 fails invalid_config before any store call"
)

func dvGenBounded() dvFile {
	abc := dvAccountsABC
	vs := []dvVector{
		{Name: dvbDuplicates, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "t1", 10),
			dvbNote(dvbOp("credit", "a", "t1", 10), "the same amount: duplicate, nothing written"),
			dvbNote(dvbOp("credit", "a", "t1", 5), "another amount: conflicting_transaction, nothing written"),
			dvbNote(dvbOp("debit", "a", "t1", 10), "the other sign: conflicting_transaction"),
			dvbNote(dvbOp("credit", "b", "t1", 10), "another Account: duplicate"),
			dvbNote(dvbOp("credit", "b", "t1", 7), "another Account, another amount: conflicting_transaction"),
		}},
		{Name: dvbAsk, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "c1", 10),
			dvbOp("credit", "b", "c2", 5),
			dvbNote(dvbOp("debit", "a", "d1", 12), "available 10: asks for 2 (asked = received + 2), written"),
			dvbNote(dvbOp("debit", "a", "d1", 13), "a larger shortfall raises the request"),
		}},
		{Name: dvbAskNothing, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "c1", 10),
			dvbOp("credit", "b", "c2", 5),
			dvbNote(dvbOp("debit", "a", "d1", 16), "short 6, the others hold 5: nothing asked, nothing written"),
		}},
		{Name: dvbGrant, Options: dvbOptions(2, 2), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "ca", 10),
			dvbNote(dvbOp("debit", "b", "db", 4), "asks for 4"),
			dvbNote(dvbOp("debit", "c", "dc", 9), "asks for 9"),
			dvbNote(dvbOp("sync", "a", "", 0), "spare 10 - Keep 2: 4 to b, 4 to c"),
			dvbNote(dvbOp("debit", "b", "db", 4), "granted: goes through"),
			dvbNote(dvbOp("credit", "c", "cc", 6), "c's own credit"),
			dvbNote(dvbOp("debit", "c", "dc", 9), "goes through and withdraws the rest of c's request"),
			dvbNote(dvbOp("sync", "a", "", 0), "no request left: nothing written"),
		}},
		{Name: dvbGrantAsking, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "b", "cb", 10),
			dvbOp("credit", "c", "cc", 1),
			dvbNote(dvbOp("debit", "a", "da", 3), "asks for 3"),
			dvbNote(dvbOp("debit", "c", "dc", 3), "asks for 2 and gives its 1 to a, a smaller requester"),
			dvbNote(dvbOp("debit", "b", "db", 11), "asks for 1; gives a the 2 it still needs, nothing to c (larger than b) though 8 are spare"),
			dvbNote(dvbOp("sync", "b", "", 0), "b still asks: nothing for c, nothing written"),
		}},
		{Name: dvbRefused, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "c1", 10, "", "refuse"), "the second put is the first one again"),
			dvbNote(dvbOp("credit", "a", "c2", 5, "", "refuse", "", "refuse", "", "refuse"), "every attempt refused: unavailable, nothing stored"),
			dvbOp("value", "a", "", 0),
			dvbNote(dvbOp("credit", "a", "c2", 5), "applied now"),
		}},
		{Name: dvbAmbLanded, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "c1", 10, "", "ambiguous_landed"), "the next fetch holds it: applied, no second put"),
			dvbNote(dvbOp("credit", "a", "c1", 10), "duplicate"),
		}},
		{Name: dvbAmbLost, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "b", "cb", 10),
			dvbNote(dvbOp("credit", "a", "c1", 10, "", "ambiguous_lost", "", "refuse", "", "refuse"), "ambiguous_write: pending, in doubt"),
			dvbNote(dvbOp("debit", "a", "d1", 5), "the credit in doubt is not spendable: asks for 5; the put lands the pending write"),
			dvbNote(dvbOp("credit", "a", "c1", 10), "the same txn: duplicate, definite"),
			dvbNote(dvbOp("debit", "a", "d1", 5), "spendable now: goes through"),
		}},
		{Name: dvbSettle, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "x1", 10),
			dvbNote(dvRecFaults(dvbOp("credit", "b", "x1", 10, "stale"), "x1", "stale"), "stale reads of the key and of x1's record: b applies x1 too; two siblings"),
			dvbNote(dvbOp("sync", "b", "", 0), "b is the larger holder: takes its copy back"),
			dvbNote(dvbOp("sync", "a", "", 0), "a, the smallest holder, keeps its copy; nothing to write"),
		}},
		{Name: dvbSettleSpent, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "x1", 10),
			dvbNote(dvRecFaults(dvbOp("credit", "b", "x1", 10, "stale"), "x1", "stale"), "stale reads of the key and of x1's record: b applies x1 too"),
			dvbNote(dvbOp("debit", "b", "d1", 10, "stale2"), "another stale read: b spends the rights"),
			dvbNote(dvbOp("sync", "b", "", 0), "Retract refused: x1 stays doubled; the siblings are merged"),
		}},
		{Name: dvbSettleAmount, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "x1", 10),
			dvbNote(dvRecFaults(dvbOp("credit", "b", "x1", 7, "stale"), "x1", "stale"), "stale reads of the key and of x1's record: b applies x1 with another amount (a caller's reuse of an id); two siblings"),
			dvbNote(dvbOp("sync", "b", "", 0), "the smaller holder's copy has another amount: b keeps its acknowledged copy; both count"),
			dvbNote(dvbOp("credit", "b", "x1", 7), "b's copy: duplicate"),
			dvbNote(dvbOp("credit", "a", "x1", 10), "a's copy: duplicate"),
		}},
		{Name: dvbNoWrite, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("sync", "a", "", 0),
			dvbOp("credit", "a", "c1", 5),
			dvbNote(dvbOp("sync", "a", "", 0), "nothing changed: no put"),
			dvbNote(dvbOp("sync", "b", "", 0), "b has nothing to write either"),
			dvbOp("value", "b", "", 0),
		}},
		{Name: dvbTransferClose, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "c1", 10),
			dvbTo("transfer", "a", "b~bbbbbbbb", 3),
			dvbNote(dvbTo("transfer", "a", "b~bbbbbbbb", 20), "beyond a's rights: insufficient_rights, nothing written"),
			dvbNote(dvbOp("debit", "c", "dc", 4), "asks for 4"),
			dvbNote(dvbTo("close", "a", "b~bbbbbbbb", 0), "4 to c's request, the other 3 to the heir"),
			dvbNote(dvbOp("credit", "a", "c2", 1), "after Close: invalid_config, no call"),
			dvbNote(dvbOp("sync", "a", "", 0), "after Close: invalid_config"),
			dvbNote(dvbOp("debit", "b", "db", 6), "the heir spends what it got"),
			dvbNote(dvbTo("close", "c", "", 0), "no heir, no request: nothing to write"),
		}},
		{Name: dvbCloseWithdraw, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "c1", 10),
			dvbNote(dvbOp("debit", "b", "d1", 4), "asks for 4"),
			dvbNote(dvbTo("close", "b", "a~aaaaaaaa", 0), "withdraws b's request (written); b has nothing for the heir"),
			dvbNote(dvbOp("credit", "a", "c2", 10), "no request left: a grants nothing"),
			dvbNote(dvbOp("sync", "a", "", 0), "nothing to write"),
		}},
		{Name: dvbTransferOnce, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "c1", 4),
			dvbNote(dvbTo("transfer", "a", "b~bbbbbbbb", 3, "", "ambiguous_landed"), "the put lands, its answer lost; the next attempt's read holds it, so its state holds this call's transfer (sent to b is 3, not the first attempt's 0): nothing is given again, nothing more written"),
			dvbNote(dvbOp("debit", "b", "d1", 3), "b spends the 3"),
			dvbNote(dvbOp("debit", "a", "d2", 1), "a has 1 left"),
			dvbOp("value", "a", "", 0),
		}},
		{Name: dvbCloseInDoubt, Options: dvbOptions(1, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "c1", 10, "", "ambiguous_landed", "refuse"), "the put lands, its answer lost; the retry's fetch is refused: ambiguous_write, c1 in U (not spendable)"),
			dvbNote(dvbTo("close", "a", "b~bbbbbbbb", 0), "the read shows c1 landed and its record is written; a closed account never settles again, so its rights go to the heir with U: 10"),
			dvbNote(dvbOp("credit", "b", "c1", 10), "duplicate"),
			dvbNote(dvbOp("debit", "b", "d1", 10), "the heir spends the 10"),
			dvbOp("value", "b", "", 0),
		}},
		{Name: dvbCorrupt, Options: dvbOptions(2, 0), Ledgers: abc,
			InitialSiblings: []dvSibling{{Value: "c0"}},
			Steps: []dvStep{
				dvbNote(dvbOp("credit", "a", "t1", 5), "the sibling is not an envelope: corrupt, one fetch, nothing written"),
				dvbNote(dvbOp("value", "b", "", 0), "every read of the key fails the same way"),
				dvbNote(dvbOp("sync", "b", "", 0), "nothing is written over it"),
			}},
		{Name: dvbPastInt64, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbOp("credit", "a", "x1", 1<<62+10),
			dvbNote(dvbOp("credit", "b", "y1", 1<<62+10, "stale"), "a stale read: two siblings, whose value is 2^63+20"),
			dvbNote(dvbOp("value", "a", "", 0), "the value does not fit: overflow"),
			dvbNote(dvbOp("sync", "a", "", 0), "the merge is kept and written; value reads 2^63-1"),
			dvbNote(dvbOp("credit", "a", "x2", 1), "further past int64: overflow, nothing written"),
			dvbNote(dvbOp("credit", "b", "y1", 1<<62+10), "a retry: duplicate"),
			dvbNote(dvbOp("debit", "b", "d1", 20), "towards int64: applied (2^63, which value reads as 2^63-1)"),
			dvbNote(dvbOp("debit", "a", "d2", 1), "2^63-1: applied"),
			dvbNote(dvbOp("value", "b", "", 0), "fits again"),
		}},
		{Name: dvbGrantPastMax, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "b", "t1", 1<<63-4, "", "ambiguous_lost", "", "refuse", "", "refuse"), "ambiguous_write: pending, in doubt, not spendable"),
			dvbOp("credit", "a", "t2", 1<<63-4),
			dvbNote(dvbOp("debit", "b", "t3", 10), "nothing spendable: asks for 10; the put lands t1 too, taking the value past int64"),
			dvbNote(dvbOp("debit", "a", "t4", 10), "granting b's request would take b's rights past int64: skipped, and the debit applies"),
			dvbNote(dvbOp("sync", "a", "", 0), "b's request stays; nothing to write"),
			dvbNote(dvbOp("debit", "b", "t3", 10), "b's own debit: t1 is spendable now; withdraws"),
		}},
		{Name: dvbBadInput, Options: dvbOptions(2, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "t1", -5), "an amount below 1: invalid_amount, before any store call"),
			dvbNote(dvbOp("debit", "a", "", 5), "an invalid txn: invalid_txn, before any store call"),
			dvbNote(dvbTo("transfer", "a", "", 5), "an invalid recipient: invalid_actor, before any store call"),
			dvbNote(dvbOp("credit", "a", "t1", 5, "refuse"), "the fetch refused: unavailable after one attempt, no retry, nothing written"),
			dvbNote(dvbOp("value", "a", "", 0, "refuse"), "a read whose fetch is refused fails unavailable"),
			dvbOp("credit", "a", "t1", 5),
			dvbNote(dvbOp("credit", "a", "t2", 7, "", "ambiguous_lost", "refuse"), "an ambiguous put, then the retry's fetch refused: ambiguous_write+unavailable, pending"),
			dvbNote(dvbOp("credit", "a", "t2", 7), "the same txn: held by the pending write, which this call puts"),
			dvbOp("value", "b", "", 0),
		}},
	}
	vs = append(vs, dvbRecordVectors()...)
	return dvFile{
		Driver:       "bounded",
		Note:         "bounded.Account (SPEC.md 13.5) over a scripted sibling store (10.1, 11.1); the Accounts are listed in ledgers and named by each step's ledger",
		Vectors:      dvGenerate("bounded", vs),
		OptionChecks: dvBoundedOptionChecks(),
	}
}

// dvbRecordVectors are the vectors of SPEC.md 13.5 "Records".
func dvbRecordVectors() []dvVector {
	abc := dvAccountsABC
	one := dvbOptions(1, 0)
	one.Window = 1
	two := dvbOptions(1, 0)
	two.Window = 2
	return []dvVector{
		{Name: dvbRecSlid, Options: one, Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "x1", 10), "a fetches x1's record key (none), applies, puts the key, then x1's record (with the record fetch's token)"),
			dvbNote(dvbOp("credit", "a", "x2", 1), "window 1: x1 leaves a's window"),
			dvbNote(dvbOp("credit", "b", "x1", 10), "no holder of x1: b fetches its record, which has this amount: duplicate, nothing written"),
			dvbNote(dvbOp("credit", "b", "x1", 7), "the record's amount is another: conflicting_transaction, nothing written"),
			dvbOp("value", "b", "", 0),
		}},
		{Name: dvbRecRefused, Options: dvbOptions(1, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvRecFaults(dvbOp("credit", "a", "x1", 10), "x1", "", "refuse"), "x1 lands, its record put is refused: ambiguous_write+unavailable, landed; the record is owed"),
			dvbNote(dvRecFaults(dvbOp("credit", "a", "x2", 1), "x1", "", "refuse"), "the owed record first (its key fetched: no live record, so its put takes the fetch's token): refused again, so nothing is read or applied: unavailable"),
			dvbNote(dvRecFaults(dvbOp("credit", "a", "x1", 10), "x1", "", "refuse"), "a retry of x1 there: its record still owed: ambiguous_write+unavailable"),
			dvbNote(dvbOp("credit", "a", "x2", 1), "x1's record written, then x2 applied and recorded"),
			dvbOp("value", "a", "", 0),
		}},
		{Name: dvbRecVouch, Options: dvbOptions(1, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvRecFaults(dvbOp("credit", "a", "x1", 10), "x1", "", "refuse"), "x1 lands, its record put is refused; a stops here, owing it"),
			dvbNote(dvbOp("credit", "b", "x1", 10), "b reads a's copy: duplicate; x1 has no live record, so b writes one naming a's copy (with its fetch's token) before answering"),
			dvbNote(dvbOp("credit", "c", "x1", 10, "stale"), "c's read of the key is stale (no x1): x1's record answers: duplicate"),
			dvbOp("value", "c", "", 0),
		}},
		{Name: dvbRecHeld, Options: two, Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "x1", 1, "", "ambiguous_lost", "", "ambiguous_lost"), "both puts lost: ambiguous_write, pending; x1 unrecorded"),
			dvbNote(dvbOp("credit", "a", "x2", 2, "", "ambiguous_lost", "", "ambiguous_lost"), "the same: x1 and x2 unrecorded, as many as the window"),
			dvbNote(dvbOp("credit", "a", "x3", 4), "applying x3 would push x1 out of a's window before its record exists: held back, the attempt puts the pending write alone; it lands, x1's and x2's records are written (each key fetched first), and a new attempt applies x3"),
			dvbNote(dvbOp("sync", "a", "", 0), "nothing to do"),
			dvbNote(dvbOp("credit", "a", "x3", 4), "duplicate"),
			dvbOp("value", "a", "", 0),
		}},
		{Name: dvbRecLanded, Options: dvbOptions(1, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "x1", 5, "", "ambiguous_landed", "refuse"), "the put lands, its answer lost; the retry's fetch is refused: ambiguous_write+unavailable, pending"),
			dvbNote(dvbOp("sync", "a", "", 0), "the read holds the pending write: it landed, so x1's record is owed, and written after the cycle (its key fetched first)"),
			dvbNote(dvbOp("credit", "b", "x1", 5), "duplicate"),
		}},
		{Name: dvbRecOwnDoubt, Options: dvbOptions(1, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbOp("credit", "a", "x1", 5, "", "ambiguous_lost", "", "ambiguous_lost"), "both puts lost: ambiguous_write, pending; a's copy of x1 in doubt"),
			dvbNote(dvbOp("credit", "b", "x1", 5, "", "ambiguous_landed", "refuse"), "b reads no x1 and no record: applies it; the put lands, its answer lost, and the retry's fetch is refused: ambiguous_write+unavailable, pending; b stops here, its record never written"),
			dvbNote(dvbOp("credit", "a", "x1", 5, "", "refuse", "", "refuse"), "a reads b's copy beside its own in doubt, which may never land: x1 has no live record, so a record naming b's copy is owed; both puts refused, but b's copy is in the store: duplicate as stored, once that record is written"),
			dvbNote(dvbOp("credit", "c", "x1", 5, "stale"), "c's read of the key is stale (no x1): x1's record answers: duplicate"),
			dvbOp("value", "c", "", 0),
		}},
		{Name: dvbClockOutside, Options: dvbOptions(1, 0), Ledgers: abc, Steps: []dvStep{
			dvbNote(dvbClock(dvbOp("credit", "a", "x1", 5), "1970-01-01T00:00:00Z"), "no record can be timed at or before 1970: invalid_config, nothing read or written"),
			dvbNote(dvbClock(dvbOp("value", "a", "", 0), "1969-12-31T23:59:59Z"), "the same for a read"),
			dvbNote(dvbClock(dvbOp("credit", "a", "x1", 5), "2262-04-11T23:47:16.854775808Z"), "past int64 nanoseconds: the same"),
			dvbNote(dvbClock(dvbOp("credit", "a", "x1", 5), "2030-01-01T00:00:00Z"), "a clock that can time a record: applied and recorded"),
		}},
	}
}

// dvbClock sets what the Accounts' clock reads from step s on.
func dvbClock(s dvStep, at string) dvStep {
	s.Clock = at
	return s
}

// ---------------------------------------------------------------------------
// The model: SPEC.md 13.5 over boundedModel (bounded_test.go), which is
// written from 13.1-13.4 and shares no code with package bounded. It reads
// each step's calls in order, answers the Account's reads from them, and
// derives the value of every put and the step's results.

// dvbAcct is what the model keeps of one Account (13.5 "State kept").
type dvbAcct struct {
	writer  string
	s       *boundedModel    // S, the last write
	pending bool             // S's put may not have landed
	u       map[string]int64 // U: credits answered ambiguous_write
	closed  bool
	// The records (13.5 "Records"): the txns this attempt applied, those
	// of writes not known to have landed, the records owed, and the record
	// fetch's token of a call's txn whose lookup found no live record.
	applying, unrecorded map[string]int64
	owed                 map[string]dvRecord
	tokens               map[string]string
}

// landed makes the records of acc's txns in writes now known to have
// landed owed: writer A, at the vectors' clock, A's seq in S.
func (acc *dvbAcct) landed() {
	v := uint64(1)
	if e := acc.s.entries[acc.writer]; e != nil {
		v = max(e.seq, 1)
	}
	for _, set := range []map[string]int64{acc.unrecorded, acc.applying} {
		for x, n := range set {
			acc.owed[x] = dvRecord{Txn: x, Amount: dvInt(n), Writer: acc.writer, At: dvAt(dvT0, 0), Version: fmt.Sprint(v)}
		}
		clear(set)
	}
}

// unwritten is how many of acc's own txns have no record yet: the
// unrecorded ones and its owed records naming it.
func (acc *dvbAcct) unwritten() int {
	n := len(acc.unrecorded)
	for _, r := range acc.owed {
		if r.Writer == acc.writer {
			n++
		}
	}
	return n
}

// recFetch is a fetch of txn's record key: the live records of txn and
// the token; kind is the error that ends the step, "" when ok.
func (m *dvbModel) recFetch(cur *dvbCall, txn string) (live []dvRecord, token, kind string, ok bool) {
	c, found := m.take(cur, "fetch")
	if !found {
		return nil, "", "", false
	}
	if want := dvRecordKey(m.v.Options.Key, txn); c.Key != want {
		m.fail("fetch of key %q, the model fetches %s's record %q", c.Key, txn, want)
	}
	if c.Reply != "ok" {
		return nil, "", "unavailable", true
	}
	for _, sb := range c.Siblings {
		if sb.Record == nil {
			return nil, "", "corrupt", true
		}
		if sb.Record.Txn == txn { // all live: the vectors' clock does not move
			live = append(live, *sb.Record)
		}
	}
	return live, c.Token, "", true
}

// flush writes acc's owed records, a set of Puts in any order (13.5
// "Records"); it reports whether all were written. ok is false when the
// vector stops.
func (m *dvbModel) flush(acc *dvbAcct, cur *dvbCall) (all, ok bool) {
	// An owed record with no token of its call is fetched first, the
	// fetches a set: a live record of its amount writes it already; with
	// none live, its Put takes the fetch's token.
	fetch := map[string]string{}
	for x := range acc.owed {
		if _, has := acc.tokens[x]; !has {
			fetch[dvRecordKey(m.v.Options.Key, x)] = x
		}
	}
	if !m.takeSet(cur, "fetch", fetch, func(x string, c dvCall) {
		if c.Reply != "ok" {
			return
		}
		var live []dvRecord
		corrupt := false
		for _, sb := range c.Siblings {
			if sb.Record == nil || sb.Record.Key != "" {
				corrupt = true
			} else if sb.Record.Txn == x {
				live = append(live, *sb.Record)
			}
		}
		switch {
		case corrupt:
		case slices.ContainsFunc(live, func(r dvRecord) bool { return r.Amount == acc.owed[x].Amount }):
			delete(acc.owed, x)
			delete(acc.u, x) // recorded: its credit is spendable
		case len(live) == 0:
			acc.tokens[x] = c.Token
		}
	}) {
		return false, false
	}
	byKey := map[string]string{}
	for x := range acc.owed {
		byKey[dvRecordKey(m.v.Options.Key, x)] = x
	}
	if !m.takeSet(cur, "put", byKey, func(x string, c dvCall) {
		if want := acc.owed[x]; c.Actor != acc.writer || c.Token != acc.tokens[x] || c.Record == nil || *c.Record != want {
			m.fail("record put %s %+v as %s token %q: the model puts %+v as %s token %q", c.Key, c.Record, c.Actor, c.Token, want, acc.writer, acc.tokens[x])
		}
		if c.Reply == "ok" {
			delete(acc.owed, x)
			delete(acc.u, x) // recorded: its credit is spendable
		}
		delete(acc.tokens, x) // a token serves one Put
	}) {
		return false, false
	}
	return len(acc.owed) == 0, true
}

// takeSet takes len(byKey) calls of method, a set in any order, each to a
// record key of byKey, and gives each to fn with the txn its key stands
// for. It is false when the vector stops.
func (m *dvbModel) takeSet(cur *dvbCall, method string, byKey map[string]string, fn func(x string, c dvCall)) bool {
	for range len(byKey) {
		c, found := m.take(cur, method)
		if !found {
			return false
		}
		x, known := byKey[c.Key]
		if !known {
			m.fail("record %s %s: the model owes no record under that key", method, c.Key)
			continue
		}
		delete(byKey, c.Key)
		fn(x, c)
	}
	return true
}

// flushFirst writes acc's owed records before an operation's cycle (13.5
// "Records"); run is false when the call ends there, as r says: the
// vector stops, or a record was not written (unavailable, nothing read).
func (m *dvbModel) flushFirst(acc *dvbAcct, cur *dvbCall) (r dvbCycle, run bool) {
	switch all, ok := m.flush(acc, cur); {
	case !ok:
		return dvbCycle{stop: true}, false
	case !all:
		return dvbCycle{err: "unavailable", attempts: 1}, false
	}
	return dvbCycle{}, true
}

// acknowledge writes acc's owed records after a call's cycle: the call's
// error kind, "" unless txn's own record is still owed (13.5 "Records").
func (m *dvbModel) acknowledge(acc *dvbAcct, cur *dvbCall, txn string) string {
	m.flush(acc, cur)
	if _, owed := acc.owed[txn]; owed {
		return "ambiguous_write+unavailable"
	}
	return ""
}

// vouch is 13.5's record of a call answered from another actor's copy:
// with no live record of txn, one naming the first other holder of that
// amount is owed; the account's own copy needs none once landed (its own
// record), and counts for nothing in a write in doubt. It returns the kind
// of a failed fetch.
func (m *dvbModel) vouch(acc *dvbAcct, cur *dvbCall, txn string, amount int64) (kind string, ok bool) {
	hs, amts := acc.s.holderActors(txn)
	_, pending := acc.unrecorded[txn]
	if _, owed := acc.owed[txn]; owed || slices.Contains(hs, acc.writer) && !pending {
		return "", true
	}
	holder := ""
	for i, h := range hs {
		if h != acc.writer && amts[i] == amount {
			holder = h
			break
		}
	}
	if holder == "" {
		return "", true
	}
	live, token, kind, ok := m.recFetch(cur, txn)
	if !ok || kind != "" || len(live) > 0 {
		return kind, ok
	}
	acc.owed[txn] = dvRecord{Txn: txn, Amount: dvInt(amount), Writer: holder, At: dvAt(dvT0, 0), Version: fmt.Sprint(max(acc.s.entries[holder].seq, 1))}
	acc.tokens[txn] = token
	return "", true
}

// dvbModel checks one vector.
type dvbModel struct {
	v        dvVector
	window   int
	keep     int64
	retries  int
	problems []string
	where    string
	// badClock: the step's clock reads outside 1970..2262, where no
	// record can be timed (SPEC.md 13.5 "Records"): every read fails.
	badClock bool
}

func (m *dvbModel) fail(format string, args ...any) {
	m.problems = append(m.problems, m.where+": "+fmt.Sprintf(format, args...))
}

// dvbCopy returns a copy of an entry (nil for none).
func dvbCopy(e *bmEntry) *bmEntry {
	if e == nil {
		return nil
	}
	c := *e
	c.sent = maps.Clone(e.sent)
	c.recent = slices.Clone(e.recent)
	return &c
}

// dvbFromState builds the model of a decoded state; its encoding must be
// the bytes given (SPEC.md 13.4, by the model's own writer).
func (m *dvbModel) fromState(what, value string, st *dvBState) *boundedModel {
	if st == nil {
		m.fail("%s: no decoded state", what)
		return nil
	}
	bm := newBoundedModel(0, "", m.window)
	for _, e := range st.Entries {
		be := &bmEntry{sent: map[string]int64{}}
		var err error
		parse := func(s string) int64 {
			n, e2 := strconv.ParseInt(s, 10, 64)
			if e2 != nil {
				err = e2
			}
			return n
		}
		be.seq, err = strconv.ParseUint(e.Seq, 10, 64)
		be.credits, be.debits, be.asked = parse(e.Credits), parse(e.Debits), parse(e.Asked)
		for to, n := range e.Sent {
			be.sent[to] = parse(n)
		}
		for _, x := range e.Recent {
			be.recent = append(be.recent, [2]any{x[0], parse(x[1])})
		}
		if err != nil {
			m.fail("%s: entry %s: %v", what, e.Actor, err)
		}
		bm.entries[e.Actor] = be
	}
	if got := bm.state(); got.Hex != value {
		m.fail("%s: value %s is not the encoding of its state (%s)", what, value, got.Hex)
	}
	return bm
}

// newer reports whether entry x wins over y in a merge (SPEC.md 13.2).
func dvbNewer(x, y *bmEntry) bool {
	return y == nil || x.seq > y.seq || (x.seq == y.seq && bmCompare(x, y) > 0)
}

// dvbCovers reports whether x is at least y by the merge order.
func dvbCovers(x, y *bmEntry) bool {
	return x != nil && (x.seq > y.seq || (x.seq == y.seq && bmCompare(x, y) >= 0))
}

func (bm *boundedModel) rightsOf(a string) int64 { r, _ := bm.rights(a); return r }

func (bm *boundedModel) outstanding(a string) int64 {
	e := bm.entries[a]
	if e == nil {
		return 0
	}
	recv, _ := bm.received(a)
	return max(0, e.asked-recv)
}

// holderActors returns the actors holding txn, sorted, with their amounts.
func (bm *boundedModel) holderActors(txn string) (actors []string, amounts []int64) {
	for _, a := range sortedKeys(bm.entries) {
		for _, x := range bm.entries[a].recent {
			if x[0].(string) == txn {
				actors, amounts = append(actors, a), append(amounts, x[1].(int64))
			}
		}
	}
	return actors, amounts
}

// The 13.2 operations the Account uses, on the model. Each returns the
// error kind ("" when done).

func (bm *boundedModel) apply(a, txn string, amt int64) string {
	e := bm.next(a)
	if amt > 0 {
		e.credits += amt
	} else {
		e.debits -= amt
	}
	e.recent = append(e.recent, [2]any{txn, amt})
	if len(e.recent) > bm.window {
		e.recent = e.recent[len(e.recent)-bm.window:]
	}
	return bm.commit(a, e, true)
}

func (bm *boundedModel) transfer(a, to string, n int64) string {
	if bm.rightsOf(a) < n {
		return "insufficient_rights"
	}
	e := bm.next(a)
	e.sent[to] += n
	return bm.commit(a, e, true)
}

func (bm *boundedModel) request(a string, n int64) (bool, string) {
	recv, _ := bm.received(a)
	if e := bm.entries[a]; e != nil && e.asked >= recv+n {
		return false, ""
	}
	e := bm.next(a)
	e.asked = recv + n
	return true, bm.commit(a, e, false)
}

func (bm *boundedModel) withdraw(a string) bool {
	if bm.outstanding(a) == 0 {
		return false
	}
	recv, _ := bm.received(a)
	e := bm.next(a)
	e.asked = recv
	bm.commit(a, e, false)
	return true
}

func (bm *boundedModel) retract(a, txn string) (bool, string) {
	e := bm.entries[a]
	if e == nil {
		return false, ""
	}
	i := slices.IndexFunc(e.recent, func(x [2]any) bool { return x[0].(string) == txn })
	if i < 0 {
		return false, ""
	}
	x := e.recent[i][1].(int64)
	if x > 0 && bm.rightsOf(a) < x {
		return false, "insufficient_rights"
	}
	n := bm.next(a)
	if x > 0 {
		n.credits -= x
	} else {
		n.debits += x
	}
	n.recent = slices.Delete(n.recent, i, i+1)
	return true, bm.commit(a, n, true)
}

func (bm *boundedModel) install(a string, e *bmEntry) {
	if e == nil {
		delete(bm.entries, a)
	} else {
		bm.entries[a] = e
	}
	bm.givers = nil
}

// spendable is rights(A) less the credits in U (13.5).
func (acc *dvbAcct) spendable() int64 {
	s := acc.s.rightsOf(acc.writer)
	for _, n := range acc.u {
		if n > 0 {
			s -= n
		}
	}
	return s
}

// grant is step 5; it returns what it gave.
func (m *dvbModel) grant(acc *dvbAcct, keep int64) int64 {
	bm, A := acc.s, acc.writer
	spare := acc.spendable() - keep
	asking := bm.outstanding(A) > 0
	var given int64
	for _, r := range sortedKeys(bm.entries) {
		n := bm.outstanding(r)
		if n == 0 {
			continue
		}
		if spare <= 0 || (asking && r >= A) {
			break
		}
		if r == A {
			continue
		}
		g := min(spare, n)
		if k := bm.transfer(A, r, g); k == "overflow" {
			continue // 13.5 step 5: r's rights would pass int64
		} else if k != "" {
			m.fail("grant to %s: %s", r, k)
			return given
		}
		spare -= g
		given += g
	}
	return given
}

// dvbCall is the model's cursor over a step's calls.
type dvbCall struct {
	calls []dvCall
	next  int
}

func (m *dvbModel) take(cur *dvbCall, method string) (dvCall, bool) {
	if cur.next >= len(cur.calls) {
		m.fail("the Account makes a %s the vector does not list (after %d calls)", method, len(cur.calls))
		return dvCall{}, false
	}
	c := cur.calls[cur.next]
	cur.next++
	if c.Method != method {
		m.fail("call %d is a %s, the Account makes a %s", cur.next, c.Method, method)
		return dvCall{}, false
	}
	return c, true
}

// dvbCycle is what one call's cycle ended with.
type dvbCycle struct {
	err                    string // the error kinds, "" for none
	attempts               int
	landed                 bool
	value, rights, granted int64
	stop                   bool // the vector ended the model's reading
}

// read is steps 1 and 2: the fetch and the merge. It returns prev, the
// number of siblings and whether they held every entry of S; ok is false
// when the fetch failed (err set) or the vector stops.
// dvbEnvelopePrefix is the hex of the envelope's first bytes (SPEC.md
// 3.3): a three-element array and the tag "bounded".
const dvbEnvelopePrefix = "93a7626f756e646564"

func (m *dvbModel) read(acc *dvbAcct, cur *dvbCall) (token string, nsibs int, held bool, err string, ok bool) {
	if m.badClock {
		return "", 0, false, "invalid_config", false
	}
	c, found := m.take(cur, "fetch")
	if !found {
		return "", 0, false, "", false
	}
	if c.Key != m.v.Options.Key {
		m.fail("fetch of key %q", c.Key)
	}
	if c.Reply != "ok" {
		return "", 0, false, "unavailable", false
	}
	before := map[string]*bmEntry{}
	for a, e := range acc.s.entries {
		before[a] = e
	}
	for i, sb := range c.Siblings {
		if sb.Bounded == nil {
			// SPEC.md 3.3: an encoding that does not start with the
			// envelope ["bounded", ...] is corrupt, and a corrupt sibling
			// ends the call before anything is merged or written.
			if strings.HasPrefix(sb.Value, dvbEnvelopePrefix) {
				m.fail("sibling %d: an envelope of bounded that does not decode: the model cannot judge it", i+1)
			}
			return "", 0, false, "corrupt", false
		}
	}
	covered := map[string]bool{}
	for i, sb := range c.Siblings {
		sm := m.fromState(fmt.Sprintf("sibling %d", i+1), sb.Value, sb.Bounded)
		if sm == nil {
			continue
		}
		for a, e := range sm.entries {
			if b := before[a]; b != nil && dvbCovers(e, b) {
				covered[a] = true
			}
			if dvbNewer(e, acc.s.entries[a]) {
				acc.s.install(a, e)
			}
		}
	}
	held = true
	for a := range before {
		if !covered[a] {
			held = false
		}
	}
	if held {
		if acc.pending {
			acc.landed() // the store holds the write in doubt
		}
		acc.pending = false
	}
	return c.Token, len(c.Siblings), held, "", true
}

// cycle runs 13.5's cycle with op as step 4, which returns whether it
// changed S and an error kind that ends the call.
func (m *dvbModel) cycle(acc *dvbAcct, cur *dvbCall, keep int64, op func() (bool, string)) dvbCycle {
	var r dvbCycle
	inDoubt := false
	defer clear(acc.applying)
	for {
		r.attempts++
		clear(acc.applying)
		token, nsibs, held, ferr, ok := m.read(acc, cur)
		if !ok {
			if ferr == "" {
				r.stop = true
			} else if inDoubt {
				r.err = "ambiguous_write+" + ferr
			} else {
				r.err = ferr
			}
			return r
		}
		A := acc.writer
		prev := dvbCopy(acc.s.entries[A])
		undo := func() { acc.s.install(A, dvbCopy(prev)) }
		// Step 3: settle.
		for x := range acc.u {
			if e := acc.s.entries[A]; e == nil || !slices.ContainsFunc(e.recent, func(t [2]any) bool { return t[0].(string) == x }) {
				delete(acc.u, x)
			}
		}
		var settled []string
		if e := acc.s.entries[A]; e != nil {
			for _, t := range slices.Clone(e.recent) {
				txn := t[0].(string)
				hs, amounts := acc.s.holderActors(txn)
				if !slices.ContainsFunc(hs, func(h string) bool {
					return h < A && amounts[slices.Index(hs, h)] == t[1].(int64)
				}) {
					continue // 13.5 step 3: no smaller holder of this amount
				}
				done, k := acc.s.retract(A, txn)
				if k == "insufficient_rights" || k == "overflow" {
					continue // 13.5 step 3: skipped, the copy stays
				}
				if k != "" {
					m.fail("retract %s: %s", txn, k)
				}
				if done {
					settled = append(settled, txn)
				}
			}
		}
		// Step 4.
		changed, k := op()
		if k != "" {
			undo()
			r.err = k
			return r
		}
		// Step 5.
		given := m.grant(acc, keep)
		r.value, _ = acc.s.value()
		r.rights, r.granted = max(0, acc.spendable()), given
		// Step 6.
		if len(settled) == 0 && !changed && given == 0 && !acc.pending && nsibs <= 1 && held {
			r.landed, r.err = true, ""
			return r
		}
		// Step 7.
		put, found := m.take(cur, "put")
		if !found {
			r.stop = true
			return r
		}
		want := acc.s.state().Hex
		if put.Key != m.v.Options.Key || put.Actor != A || put.Token != token || put.Value != want {
			m.fail("put %s as %s with token %q: the model puts %s as %s with token %q", put.Value, put.Actor, put.Token, want, A, token)
		}
		m.fromState("put", put.Value, put.Bounded)
		forget := func() {
			for _, x := range settled {
				delete(acc.u, x)
			}
		}
		var err string
		switch put.Reply {
		case "ok":
			acc.pending = false
			acc.landed()
			forget()
			r.landed, r.err = true, ""
			return r
		case "ambiguous":
			acc.pending, inDoubt = true, true
			maps.Copy(acc.unrecorded, acc.applying)
			forget()
			err = "ambiguous_write"
		case "refused":
			undo()
			err = "unavailable"
			if inDoubt {
				err = "ambiguous_write+unavailable"
			}
		default:
			m.fail("put reply %q", put.Reply)
			r.stop = true
			return r
		}
		if r.attempts > m.retries {
			r.err = err
			return r
		}
	}
}

func dvModelBounded(v dvVector) []string {
	m := &dvbModel{v: v, window: v.Options.Window, retries: v.Options.RetryCount}
	if m.window == 0 {
		m.window = 64
	}
	if m.retries == 0 {
		m.retries = 3
	}
	if v.Options.Keep == nil {
		return []string{"options: no keep"}
	}
	m.keep = int64(*v.Options.Keep)
	accts := map[string]*dvbAcct{}
	writers := map[string]bool{}
	for _, d := range v.Ledgers {
		accts[d.Actor] = &dvbAcct{writer: d.Writer, s: newBoundedModel(0, "", m.window), u: map[string]int64{},
			applying: map[string]int64{}, unrecorded: map[string]int64{}, owed: map[string]dvRecord{}, tokens: map[string]string{}}
		writers[d.Writer] = true
	}
	for i, s := range v.Steps {
		m.where = fmt.Sprintf("step %d (%s)", i+1, s.Op)
		if s.Clock != "" {
			// Records are timed at dvT0: a clock that can time one stays there.
			at := dvMustTime(s.Clock)
			m.badClock = !at.After(time.Unix(0, 0)) || at.After(time.Unix(0, math.MaxInt64))
			if !m.badClock && !at.Equal(dvT0) {
				m.fail("clock %s: the model's records are timed at %s", s.Clock, dvT0.Format(time.RFC3339))
			}
		}
		acc := accts[s.Ledger]
		if acc == nil {
			m.fail("unknown account %q", s.Ledger)
			continue
		}
		got := dvStep{Op: s.Op}
		cur := &dvbCall{calls: s.Calls}
		var amount int64
		if s.Amount != nil {
			amount = int64(*s.Amount)
		}
		A := acc.writer
		result := s.Op != "sync" && s.Op != "value"
		var r dvbCycle
		switch {
		case s.Op == "credit" || s.Op == "debit":
			signed := amount
			if s.Op == "debit" {
				signed = -amount
			}
			switch {
			case amount <= 0:
				r.err = "invalid_amount"
			case !bvValidID(s.Txn):
				r.err = "invalid_txn"
			case acc.closed:
				r = dvbCycle{err: "invalid_config", attempts: 1}
			default:
				var run bool
				if r, run = m.flushFirst(acc, cur); !run {
					// 13.5 "Records": nothing read or applied
					if hs, _ := acc.s.holderActors(s.Txn); !r.stop && (acc.owed[s.Txn] != (dvRecord{}) || slices.Contains(hs, A)) {
						r.err = dvbJoin("ambiguous_write", r.err)
					}
					break
				}
				applied, refused, heldBack, available := false, false, false, int64(0)
				op := func() (bool, string) {
					refused, heldBack = false, false
					if _, amts := acc.s.holderActors(s.Txn); len(amts) > 0 {
						if slices.Contains(amts, signed) {
							k, _ := m.vouch(acc, cur, s.Txn, signed)
							return false, k
						}
						return false, "conflicting_transaction"
					}
					live, token, k, _ := m.recFetch(cur, s.Txn)
					if k != "" {
						return false, k
					}
					for _, rec := range live {
						if int64(rec.Amount) == signed {
							return false, "" // known by its record
						}
					}
					if len(live) > 0 {
						return false, "conflicting_transaction"
					}
					acc.tokens[s.Txn] = token
					sp := acc.spendable()
					if signed < 0 && amount > sp {
						refused, available = true, max(0, sp)
						short := amount - max(0, sp)
						if val, _ := acc.s.value(); val-max(0, sp) < short {
							return false, ""
						}
						ch, k := acc.s.request(A, short)
						return ch, k
					}
					if acc.unwritten() >= m.window {
						heldBack = true // 13.5: the pending write alone, if any
						return false, ""
					}
					if k := acc.s.apply(A, s.Txn, signed); k != "" {
						return false, k
					}
					acc.applying[s.Txn] = signed
					applied = true
					if signed < 0 {
						acc.s.withdraw(A)
					}
					return true, ""
				}
				r = m.cycle(acc, cur, m.keep, op)
				if heldBack && !r.stop {
					// 13.5 "Records": once the pending write landed and the
					// owed records are written, the call runs again, once.
					if all, ok := m.flush(acc, cur); !ok {
						r.stop = true
					} else if all && !acc.pending {
						n := r.attempts
						r = m.cycle(acc, cur, m.keep, op)
						r.attempts += n
					}
				}
				if r.stop {
					break
				}
				if heldBack {
					r = dvbCycle{err: "unavailable", attempts: r.attempts}
					break
				}
				hs, amts := acc.s.holderActors(s.Txn)
				switch {
				case refused:
					got.Available, got.Requested = dvI(available), dvI(acc.s.outstanding(A))
					if r.err == "" {
						r.err = "insufficient_rights"
					} else {
						r.err = dvbJoin("insufficient_rights", r.err)
					}
				case r.err != "" && !applied && (strings.Contains(r.err, "unavailable") || strings.Contains(r.err, "ambiguous_write")) && dvbStored(acc, hs):
					got.Outcome, r.landed, r.err = "duplicate", true, ""
					if k, _ := m.vouch(acc, cur, s.Txn, signed); k != "" {
						r.err = dvbJoin("ambiguous_write", k)
					} else if r.err = m.acknowledge(acc, cur, s.Txn); r.err == "" {
						delete(acc.u, s.Txn)
						r.rights = max(0, acc.spendable()) // U shrank after step 5
					}
				case r.err != "":
					if j := slices.Index(hs, A); j >= 0 && acc.pending {
						if applied {
							acc.u[s.Txn] = signed
						}
						if r.err == "unavailable" {
							r.err = "ambiguous_write"
						}
					}
					_ = amts
				default:
					got.Outcome = "duplicate"
					if applied {
						got.Outcome = "applied"
					}
					if r.err = m.acknowledge(acc, cur, s.Txn); r.err == "" {
						delete(acc.u, s.Txn)
						r.rights = max(0, acc.spendable()) // U shrank after step 5
					} else if applied {
						acc.u[s.Txn] = signed // in doubt to the caller
					}
				}
			}
		case s.Op == "transfer":
			to := s.To
			switch {
			case !bvValidID(to):
				r.err = "invalid_actor"
			case amount <= 0:
				r.err = "invalid_amount"
			case acc.closed:
				r = dvbCycle{err: "invalid_config", attempts: 1}
			default:
				var run bool
				if r, run = m.flushFirst(acc, cur); !run {
					break
				}
				var available *dvInt
				before := int64(-1) // sent(A, to) at the call's first step 4
				r = m.cycle(acc, cur, m.keep, func() (bool, string) {
					available = nil
					sent := int64(0)
					if e := acc.s.entries[A]; e != nil {
						sent = e.sent[to]
					}
					if before < 0 {
						before = sent
					} else if sent != before {
						return false, "" // this call's transfer, in a write in doubt
					}
					if sp := acc.spendable(); sp < amount {
						available = dvI(max(0, sp))
						return false, "insufficient_rights"
					}
					if to == A {
						return false, "invalid_actor"
					}
					return true, acc.s.transfer(A, to, amount)
				})
				got.Available = available
				if !r.stop {
					m.flush(acc, cur) // what is left is written before the next cycle
					if r.err == "" {
						r.rights = max(0, acc.spendable()) // records written: U shrank
					}
				}
			}
		case s.Op == "close":
			heir := s.To
			if acc.closed {
				r = dvbCycle{err: "invalid_config", attempts: 1}
				break
			}
			var run bool
			if r, run = m.flushFirst(acc, cur); !run {
				break
			}
			r = m.cycle(acc, cur, 0, func() (bool, string) {
				withdrawn := acc.s.withdraw(A) // 13.5 Close: its own request goes
				if heir == "" || heir == A {
					return withdrawn, ""
				}
				given := m.grant(acc, 0)
				// U too: a closed account never settles again (13.5 Close).
				if rest := acc.s.rightsOf(A); rest > 0 {
					return true, acc.s.transfer(A, heir, rest)
				}
				return withdrawn || given > 0, ""
			})
			if r.err == "" && !r.stop {
				// Records owed then would never be written.
				if all, ok := m.flush(acc, cur); !ok {
					r.stop = true
				} else if !all {
					r.err = "unavailable"
				}
			}
			if r.err == "" && !r.stop {
				acc.closed = true
			}
		case s.Op == "sync":
			if acc.closed {
				got.Error = "invalid_config"
				break
			}
			var run bool
			if r, run = m.flushFirst(acc, cur); !run {
				got.Error = r.err
				break
			}
			r = m.cycle(acc, cur, m.keep, func() (bool, string) { return false, "" })
			if !r.stop {
				m.flush(acc, cur) // what is left is written before the next cycle
			}
			if got.Error = r.err; r.err == "" && !r.stop {
				v, _ := acc.s.value()
				got.Value, got.Rights = dvI(v), dvI(acc.s.rightsOf(A))
			}
		case s.Op == "value":
			if acc.closed {
				got.Error = "invalid_config"
				break
			}
			_, _, _, ferr, ok := m.read(acc, cur)
			if got.Error = ferr; ok {
				v, fits := acc.s.value()
				if got.Value = dvI(v); !fits {
					got.Value, got.Error = nil, "overflow" // 13.5 Value
				}
			} else if ferr == "" {
				r.stop = true
			}
		default:
			m.fail("unknown op")
			continue
		}
		if r.stop {
			m.fail("the model stops reading this vector here")
			return m.problems
		}
		if cur.next != len(cur.calls) {
			m.fail("the vector lists %d calls, the Account makes %d", len(cur.calls), cur.next)
		}
		if result {
			got.Error, got.Attempts, got.Landed = r.err, r.attempts, dvB(r.landed)
			if r.landed {
				got.Value, got.Rights, got.Granted = dvI(r.value), dvI(r.rights), dvI(r.granted)
			}
		}
		got.Pending = dvB(acc.pending)
		clear(acc.tokens) // a call's record tokens end with it
		m.compare(s, got)
	}
	return m.problems
}

// dvbJoin joins two error kind lists in SPEC.md 2.3's order.
func dvbJoin(a, b string) string {
	set := map[string]bool{}
	for _, k := range append(strings.Split(a, "+"), strings.Split(b, "+")...) {
		set[k] = true
	}
	var out []string
	for _, k := range dvKinds {
		if set[k.name] {
			out = append(out, k.name)
		}
	}
	return strings.Join(out, "+")
}

// dvbStored is 13.5's "stored": held by another actor, or by A with no
// write pending.
func dvbStored(acc *dvbAcct, holders []string) bool {
	for _, h := range holders {
		if h != acc.writer || !acc.pending {
			return true
		}
	}
	return false
}

// compare reports the results of the vector's step that differ from the
// model's.
func (m *dvbModel) compare(want, got dvStep) {
	pairs := []struct {
		name string
		w, g any
	}{
		{"error", want.Error, got.Error},
		{"outcome", want.Outcome, got.Outcome},
		{"attempts", want.Attempts, got.Attempts},
		{"landed", dvShowB(want.Landed), dvShowB(got.Landed)},
		{"value", dvShow(want.Value), dvShow(got.Value)},
		{"rights", dvShow(want.Rights), dvShow(got.Rights)},
		{"granted", dvShow(want.Granted), dvShow(got.Granted)},
		{"requested", dvShow(want.Requested), dvShow(got.Requested)},
		{"available", dvShow(want.Available), dvShow(got.Available)},
		{"pending", dvShowB(want.Pending), dvShowB(got.Pending)},
	}
	for _, p := range pairs {
		if p.w != p.g {
			m.fail("%s: vector %v, model %v", p.name, p.w, p.g)
		}
	}
}

// dvbEditState changes the state a put writes and re-encodes it with the
// model's writer, so that the bytes and the state agree and only the rules
// can tell the put is wrong.
func dvbEditState(c *dvCall, window int, edit func(map[string]*bmEntry)) {
	m := &dvbModel{window: window}
	bm := m.fromState("edit", c.Value, c.Bounded)
	edit(bm.entries)
	bm.givers = nil
	st := bm.state()
	c.Value = st.Hex
	c.Bounded = &dvBState{Value: st.Value, Rights: st.Rights, Outstanding: st.Outstanding, Entries: st.Entries}
}

// dvbPut is the n-th put (from 0) of step i to the account's key, whatever
// record calls come between.
func dvbPut(v *dvVector, i, n int) *dvCall {
	for j := range v.Steps[i].Calls {
		if c := &v.Steps[i].Calls[j]; c.Method == "put" && c.Key == v.Options.Key {
			if n == 0 {
				return c
			}
			n--
		}
	}
	panic(fmt.Sprintf("%s: step %d has no such put", v.Name, i+1))
}

// dvbWrongExpectations are driver_bounded.json's vectors edited as a driver
// that breaks a rule of SPEC.md 13.5 would write them: the replay and the
// model must each reject every one.
var dvbWrongExpectations = []struct {
	name, vector string
	edit         func(v *dvVector)
}{
	{"grant ignores Keep", dvbGrant, func(v *dvVector) {
		dvbEditState(dvbPut(v, 3, 0), v.Options.Window, func(es map[string]*bmEntry) { es["a~aaaaaaaa"].sent["c~cccccccc"] = 6 })
	}},
	{"an asking account gives to a larger requester", dvbGrantAsking, func(v *dvVector) {
		dvbEditState(dvbPut(v, 4, 0), v.Options.Window, func(es map[string]*bmEntry) { es["b~bbbbbbbb"].sent["c~cccccccc"] = 2 })
	}},
	{"a refused attempt's state kept", dvbRefused, func(v *dvVector) {
		dvbEditState(dvbPut(v, 0, 1), v.Options.Window, func(es map[string]*bmEntry) { es["a~aaaaaaaa"].seq++ })
	}},
	{"a sync with nothing to do writes", dvbNoWrite, func(v *dvVector) {
		put := *dvbPut(v, 1, 0)
		put.Token = v.Steps[2].Calls[0].Token
		v.Steps[2].Calls = append(v.Steps[2].Calls, put)
	}},
	{"a credit in doubt spendable", dvbAmbLost, func(v *dvVector) { v.Steps[2].Available = dvI(10) }},
	{"a request when the whole balance is short", dvbAskNothing, func(v *dvVector) { v.Steps[2].Requested = dvI(6) }},
	{"pending cleared by an ambiguous_write", dvbAmbLost, func(v *dvVector) { v.Steps[1].Pending = dvB(false) }},
	{"a doubled credit not taken back", dvbSettle, func(v *dvVector) { v.Steps[2].Value = dvI(20) }},
	{"a value past int64 answered", dvbPastInt64, func(v *dvVector) { v.Steps[2].Error, v.Steps[2].Value = "", dvI(1<<63-1) }},
	{"the heir gets the requests' share", dvbTransferClose, func(v *dvVector) {
		dvbEditState(dvbPut(v, 4, 0), v.Options.Window, func(es map[string]*bmEntry) {
			delete(es["a~aaaaaaaa"].sent, "c~cccccccc")
			es["a~aaaaaaaa"].sent["b~bbbbbbbb"] = 10
		})
	}},
	{"a corrupt sibling skipped", dvbCorrupt, func(v *dvVector) { v.Steps[1].Error, v.Steps[1].Value = "", dvI(0) }},
	{"a refused fetch retried", dvbBadInput, func(v *dvVector) {
		v.Steps[3].Attempts = 2
		v.Steps[3].Calls = append(v.Steps[3].Calls, v.Steps[3].Calls[0])
	}},
	{"a refused fetch after an ambiguous put not in doubt", dvbBadInput, func(v *dvVector) { v.Steps[6].Error = "unavailable" }},
	{"a bad amount read from the store", dvbBadInput, func(v *dvVector) {
		v.Steps[0].Calls = v.Steps[3].Calls
	}},
}

// TestDriverBoundedCatchesWrongExpectations: each wrong expectation in a
// bounded driver vector fails its replay. The bounded driver starts no
// goroutine: the race pass (-short) leaves it to the full pass.
func TestDriverBoundedCatchesWrongExpectations(t *testing.T) {
	testsize.SkipSequential(t)
	raw, err := os.ReadFile(filepath.Join(vectorDir, "driver_bounded.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range dvbWrongExpectations {
		t.Run(c.name, func(t *testing.T) {
			var f dvFile
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(f.Vectors, func(v dvVector) bool { return v.Name == c.vector })
			if i < 0 {
				t.Fatalf("no vector %q", c.vector)
			}
			f.Vectors = f.Vectors[i : i+1]
			if ps := append(dvReplayFile(f.Driver, f), dvModelFile(f.Driver, f)...); len(ps) > 0 {
				t.Fatalf("the vector as it is fails:\n%s", strings.Join(ps, "\n"))
			}
			c.edit(&f.Vectors[0])
			if ps := dvReplayFile(f.Driver, f); len(ps) == 0 {
				t.Error("the replay accepted the wrong expectation")
			}
			if ps := dvModelFile(f.Driver, f); len(ps) == 0 {
				t.Error("the model accepted the wrong expectation")
			} else {
				t.Logf("model: %s", ps[0])
			}
		})
	}
}

// The bounded Account's driver mutants (TestDriverVectorMutants), one per
// rule of SPEC.md 13.5, each with the vector of driver_bounded.json that
// catches it. They join dvMutants here, after the other drivers'.
func init() {
	const f, file = "bounded/account.go", "driver_bounded"
	for _, m := range []struct{ name, rule, old, new, want string }{
		{"bounded/grant ignores Keep", "13.5 step 5: spare = spendable - Keep",
			"spare := a.spendable(c) - a.opts.Keep", "spare := a.spendable(c)", dvbGrant},
		{"bounded/an asking account gives to larger requesters", "13.5 step 5: stop when asking and r >= A",
			"if spare <= 0 || (asking && r.Actor >= a.writer) {", "if spare <= 0 || (asking && r.Actor >= a.writer && false) {", dvbGrantAsking},
		{"bounded/settle takes back the smallest holder's copy", "13.5 step 3: the smallest holder keeps its copy",
			"if h >= a.writer {\n\t\t\t\treturn false // the smallest", "if h <= a.writer {\n\t\t\t\treturn false // the smallest", dvbSettle},
		{"bounded/settle takes back a copy of another amount", "13.5 step 3: only a smaller holder's copy of the same amount takes a copy back",
			"\t\t\treturn amount == t.Amount\n", "\t\t\treturn amount == t.Amount || true\n", dvbSettleAmount},
		{"bounded/a grant past int64 fails the call", "13.5 step 5: a Transfer refused overflow skips the request",
			"errors.Is(err, crdt.ErrOverflow) {\n\t\t\tcontinue // r's rights", "false {\n\t\t\tcontinue // r's rights", dvbGrantPastMax},
		{"bounded/Close keeps its own request", "13.5 Close: step 4 first withdraws A's request",
			"withdrawn, err := c.Withdraw(a.writer)", "withdrawn, err := false, error(nil)", dvbCloseWithdraw},
		{"bounded/settle fails on a spent copy", "13.5 step 3: a Retract refused insufficient_rights is skipped",
			"if errors.Is(err, crdt.ErrInsufficientRights) || errors.Is(err, crdt.ErrOverflow) {", "if false && errors.Is(err, crdt.ErrInsufficientRights) || errors.Is(err, crdt.ErrOverflow) {", dvbSettleSpent},
		{"bounded/unconfirmed credits spendable", "13.5: spendable = rights(A) - the credits in U",
			"\t\tif amt > 0 {\n\t\t\ts -= amt", "\t\tif false && amt > 0 {\n\t\t\ts -= amt", dvbAmbLost},
		{"bounded/a written record keeps its credit unconfirmed", "13.5: writing txn's record, or finding it written, removes txn from U",
			"func (a *Account) confirmed(txn crdt.TxnID) { delete(a.unconfirmed, txn) }", "func (a *Account) confirmed(txn crdt.TxnID) {}", dvbGrantPastMax},
		{"bounded/no undo after a refused put", "13.5 step 7: unavailable puts prev back",
			"\t\t\tinvalid := retry.Classify(err) == retry.Invalid\n\t\t\tundo()", "\t\t\tinvalid := retry.Classify(err) == retry.Invalid", dvbRefused},
		{"bounded/writes when nothing changed", "13.5 step 6: nothing to do, nothing put",
			"if len(settled) == 0 && !changed && given == 0 && !a.cyc.Pending && nsibs <= 1 && storeHasAll {", "if false && len(settled) == 0 && !changed && given == 0 && !a.cyc.Pending && nsibs <= 1 && storeHasAll {", dvbNoWrite},
		{"bounded/asks when the whole balance is short", "13.5 Debit: nothing asked when value - L - spendable < s",
			"if c.Value()-c.Bound()-max(0, spendable) < short {", "if false && c.Value()-c.Bound()-max(0, spendable) < short {", dvbAskNothing},
		{"bounded/a debit that goes through does not withdraw", "13.5 Debit: Apply, then Withdraw(A)",
			"\t\tif amount < 0 {\n\t\t\t// A debit that went through needs nothing more.", "\t\tif false && amount < 0 {\n\t\t\t// A debit that went through needs nothing more.", dvbGrant},
		{"bounded/Close gives everything to the heir", "13.5 Close: the requests first, then the heir",
			"given, err := a.grant(c) // requests first", "given, err := int64(0), error(nil) // requests first", dvbTransferClose},
		{"bounded/a transfer made again by each attempt", "13.5 Transfer: an attempt whose state holds the call's transfer makes none",
			"} else if sent != before {", "} else if false && sent != before {", dvbTransferOnce},
		{"bounded/close keeps the credits in doubt", "13.5 Close: the heir gets rights(A), U included",
			"if rest := c.Rights(a.writer); rest > 0 {", "if rest := a.spendable(c); rest > 0 {", dvbCloseInDoubt},
		{"bounded/a corrupt sibling skipped", "13.5 step 2: a sibling that does not decode is corrupt and stops the call",
			"if err := dst.mergeEncoded(b, orig, covered); err != nil {", "if err := dst.mergeEncoded(b, orig, covered); err != nil && false {", dvbCorrupt},
		{"bounded/a duplicate is applied again", "13.5 step 4: a held txn with this amount changes nothing",
			"} else if known {\n\t\t\treturn false, a.vouch(", "} else if known && false {\n\t\t\treturn false, a.vouch(", dvbDuplicates},
		{"bounded/no record lookup", "13.5 Records: a live record of txn with this amount makes the call known",
			"if known, err := a.lookup(ctx, txn, amount); (known || err != nil) && !brokenNoRecordLookup {", "if known, err := a.lookup(ctx, txn, amount); false && (known || err != nil) && !brokenNoRecordLookup {", dvbRecSlid},
		{"bounded/a record of another amount ignored", "13.5 Records: a live record of another amount fails the call conflicting_transaction",
			"\tif len(recs) > 0 {\n\t\treturn false, fmt.Errorf(\"%w: transaction %q was recorded", "\tif false && len(recs) > 0 {\n\t\treturn false, fmt.Errorf(\"%w: transaction %q was recorded", dvbRecSlid},
		{"bounded/acknowledged before its record is written", "13.5 Records: a call whose record is owed is ambiguous_write",
			"\tif _, owed := a.owed[txn]; !owed {\n\t\treturn res, nil", "\tif true {\n\t\treturn res, nil", dvbRecRefused},
		{"bounded/a cycle runs while records are owed", "13.5 Records: owed records are written before the next cycle",
			"\tif err := a.flush(ctx); err != nil {\n\t\treturn a.owedBefore(txn, err)", "\tif err := a.flush(ctx); false && err != nil {\n\t\treturn a.owedBefore(txn, err)", dvbRecRefused},
		{"bounded/no record for another account's copy", "13.5 Records: a duplicate of another actor's copy with no live record writes one",
			"if _, owed := a.owed[txn]; owed || own && !pending {", "if _, owed := a.owed[txn]; owed || true || own && !pending {", dvbRecVouch},
		{"bounded/an own copy in doubt taken as landed", "13.5 Records: a duplicate of another actor's copy writes its record while the account's own copy is in doubt",
			"if _, owed := a.owed[txn]; owed || own && !pending {", "if _, owed := a.owed[txn]; owed || own && (!pending || true) {", dvbRecOwnDoubt},
		{"bounded/the record of an own copy in doubt", "13.5 Records: the record a duplicate writes names another actor's copy",
			"if h.Actor != a.writer && h.Amount == amount && (holder == \"\" || h.Actor < holder) {", "if h.Amount == amount && (holder == \"\" || h.Actor < holder) {", dvbRecOwnDoubt},
		{"bounded/no hold-back", "13.5 Records: no txn applied while the unrecorded ones number Window",
			"if a.unwritten() >= c.window() && !brokenNoHoldBack {", "if false && a.unwritten() >= c.window() && !brokenNoHoldBack {", dvbRecHeld},
		{"bounded/a held-back call not run again", "13.5 Records: once the pending write landed and the owed records are written, a held-back call runs once more",
			"if ferr := a.flush(ctx); ferr == nil && !a.cyc.Pending {", "if ferr := a.flush(ctx); false && ferr == nil && !a.cyc.Pending {", dvbRecHeld},
		{"bounded/an earlier call's owed record put with no fetch", "13.5 Records: an owed record of an earlier call is fetched first",
			"\t\tif _, ok := a.tokens[x]; ok {\n\t\t\tcontinue", "\t\tif _, ok := a.tokens[x]; ok || true {\n\t\t\tcontinue", dvbRecRefused},
		{"bounded/a landed write in doubt not recorded", "13.5 Records: a read that holds the pending write makes its records owed",
			"\tif pending && !a.cyc.Pending {\n\t\ta.landed(merged)", "\tif false && pending && !a.cyc.Pending {\n\t\ta.landed(merged)", dvbRecLanded},
		{"bounded/Value answers past int64", "13.5 Value: overflow while the value is past int64",
			"\tv, ok := c.value.Int64()\n\tif !ok {", "\tv, ok := c.value.Int64()\n\tif false && !ok {", dvbPastInt64},
	} {
		dvMutants = append(dvMutants, struct {
			name, rule, file, old, new string
			vectors                    string
			want                       string
		}{m.name, m.rule, f, m.old, m.new, file, m.want})
	}
}

// TestDriverVectorMutantsModel (opt-in with -driver-mutants) regenerates
// driver_bounded.json under each bounded Account mutant, and
// driver_ledger.json under each mutant dvModelMutants names, so that the
// file mirrors the broken driver and its replay passes, and requires the
// model to reject the mutant's vector: expectations written from a broken
// driver do not pass the independent checks.
func TestDriverVectorMutantsModel(t *testing.T) {
	if !*driverMutants {
		t.Skip("opt-in: go test ./vectors -run TestDriverVectorMutantsModel -driver-mutants")
	}
	only, err := regexp.Compile(*driverMutantsRun)
	if err != nil {
		t.Fatalf("-driver-mutants-run: %v", err)
	}
	root := copyModule(t)
	for _, m := range dvMutants {
		if (m.vectors != "driver_bounded" && !dvModelMutants[m.name]) || !only.MatchString(m.name) {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			p := filepath.Join(root, m.file)
			orig, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(root, "testdata", "vectors", m.vectors+".json")
			vec, err := os.ReadFile(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(orig), m.old, m.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := os.WriteFile(p, orig, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(data, vec, 0o644); err != nil {
					t.Fatal(err)
				}
			}()
			cmd := exec.Command("go", "test", "-count=1", "-run", "^TestDriverVectors$/^"+m.vectors+"$", "./vectors", "-update")
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			switch {
			case err == nil:
				t.Errorf("%s: the model accepted the vectors the mutant wrote\n%s", m.name, out)
			case strings.Contains(string(out), "[build failed]"):
				t.Errorf("%s: the mutant does not build\n%s", m.name, out)
			case !strings.Contains(string(out), "model: "+m.want+":"):
				t.Errorf("%s: the model did not reject %q\n%s", m.name, m.want, out)
			default:
				t.Logf("%s: the model rejects %q", m.name, m.want)
			}
		})
	}
}

// dvModelMutants are the ledger mutants TestDriverVectorMutantsModel runs:
// the size cap on a group's members, which the ledger model derives
// itself (dvApplyFits).
var dvModelMutants = map[string]bool{
	"ledger/Apply not capped at store.MaxValue":            true,
	"ledger/no room for a write's own changes":             true,
	"tpncounter/Apply cap without the transaction's bound": true,
	"tpncounter/Apply cap without room for the header":     true,
}
