package main

import (
	"cmp"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/tpncounter"
)

const inspectUsage = `usage: counterkit inspect [flags] [-hex HEX | FILE | -]

Decodes one counterkit encoding (any type: gcounter, pncounter, tgcounter,
tpncounter, bounded, tally.shard, tally.tally, deltalog.cell, balance.row,
ledger.txn, ledger.seen) and prints what it holds: type, format version,
size, value, and per type the actors, totals, history and folded records,
the bases of retired actors folded away (their exact total and cutoff),
the writers a ledger saw (each at a version) and when, window and stats.

The input is the raw bytes of FILE, of standard input (no FILE, or -), or
the hexadecimal string given with -hex (spaces allowed). Bytes that do not
decode are reported with the sentinel error they wrap, and the exit status
is 1.
`

// Description is what inspect prints, as JSON or as a table.
type Description struct {
	Type    string `json:"type"`
	Version uint64 `json:"version"`
	Bytes   int    `json:"bytes"`
	Value   any    `json:"value,omitempty"`
	// Actors lists per-actor parts (gcounter, pncounter, tgcounter,
	// tpncounter, bounded).
	Actors []ActorPart `json:"actors,omitempty"`
	// Stats is the size summary of a tpncounter or tgcounter.
	Stats *Stats `json:"stats,omitempty"`
	// Window is the window the state was read with.
	Window *Window `json:"window,omitempty"`
	// Fields holds the fields of single-record types (cells, rows, shards)
	// and a bounded counter's bound.
	Fields map[string]any `json:"fields,omitempty"`
}

// Stats is tpncounter.Stats with the output's key names (a conversion of
// it: the same fields in the same order).
type Stats struct {
	Actors       int `json:"actors"`
	Retired      int `json:"retired"`
	Transactions int `json:"transactions"`
	History      int `json:"history"`
	Folded       int `json:"folded"`
	Deferred     int `json:"deferred"`
	Conflicts    int `json:"conflicts"`
}

// ActorPart is one actor's part of a counter.
type ActorPart struct {
	Actor   string `json:"actor"`
	Half    string `json:"half,omitempty"` // P or N for pncounter and tpncounter
	Count   *int64 `json:"count,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	Total   *int64 `json:"total,omitempty"`
	History []Txn  `json:"history,omitempty"`
	Folded  []Txn  `json:"folded,omitempty"`
	Retired bool   `json:"retired,omitempty"` // a retired entry: total only
	// Bounded: what the actor applied, its rights, and what it received
	// and gave.
	Credits  *int64                 `json:"credits,omitempty"`
	Debits   *int64                 `json:"debits,omitempty"`
	Rights   *int64                 `json:"rights,omitempty"`
	Received *int64                 `json:"received,omitempty"`
	Asked    *int64                 `json:"asked,omitempty"`
	Sent     map[crdt.ActorID]int64 `json:"sent,omitempty"`
	// Version and SeenAt: a ledger first saw the actor's entry at this
	// version (the sum of its seq in both halves), which no record dated,
	// at SeenAt (ledger.seen).
	Version uint64 `json:"version,omitempty"`
	SeenAt  string `json:"seen_at,omitempty"`
}

// Txn is one transaction of a history or folded record.
type Txn struct {
	ID     crdt.TxnID `json:"id"`
	Amount int64      `json:"amount"`
}

// Window is the window a tpncounter (history and folded lengths) or a
// bounded counter (recent transactions per actor) was decoded with.
type Window struct {
	HistoryLength int `json:"history_length,omitempty"`
	FoldedLength  int `json:"folded_length,omitempty"`
	Recent        int `json:"recent,omitempty"`
}

// decodeOpts are the windows encodings are read with.
type decodeOpts struct {
	counter tpncounter.Options
	bounded int // bounded.Options.Window; 0: the default
}

// addDecodeFlags adds the window flags of the types whose window is not
// in their encoding.
func addDecodeFlags(fs *pflag.FlagSet) func() (decodeOpts, error) {
	history := fs.Int("history", 0, "tpncounter/tgcounter: the HistoryLength the state was written with (0: the default)")
	folded := fs.Int("folded", 0, "tpncounter/tgcounter: the FoldedLength (0: same as -history)")
	window := fs.Int("window", 0, "bounded: the Window the state was written with (0: the default)")
	return func() (decodeOpts, error) {
		o := decodeOpts{counter: tpncounter.Options{HistoryLength: *history, FoldedLength: *folded}, bounded: *window}
		_, err := tpncounter.New(o.counter)
		return o, cmp.Or(cli.Usage(err), invalidIf(*window < 0 || *window > bounded.MaxWindow, "-window must be in [0, %d], not %d", bounded.MaxWindow, *window))
	}
}

func runInspect(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newCommand("inspect", inspectUsage, stderr)
	hexIn := c.fs.String("hex", "", "decode this hexadecimal string instead of a file")
	opts := addDecodeFlags(c.fs)
	if code := c.parse(args); code >= 0 {
		return code
	}
	o, err := opts()
	if err != nil {
		return fail(stderr, "inspect", err)
	}
	data, err := readInput(*hexIn, c.fs.Args(), stdin)
	if err != nil {
		return fail(stderr, "inspect", err)
	}
	d, err := Describe(data, o)
	return c.emitResult(stdout, d, err)
}

func readInput(hexIn string, args []string, stdin io.Reader) ([]byte, error) {
	if hexIn != "" {
		if len(args) > 0 {
			return nil, cli.Usagef("%w: give -hex or a file, not both", crdt.ErrInvalidConfig)
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(hexIn), ""))
		if err != nil {
			return nil, cli.Usagef("%w: -hex: %v", crdt.ErrInvalidConfig, err)
		}
		return b, nil
	}
	var r io.Reader = stdin
	switch {
	case len(args) > 1:
		return nil, cli.Usagef("%w: one input at a time", crdt.ErrInvalidConfig)
	case len(args) == 1 && args[0] != "-":
		f, err := os.Open(args[0])
		if err != nil {
			return nil, fmt.Errorf("%w: %v", crdt.ErrNotFound, err)
		}
		defer f.Close()
		r = f
	}
	// One byte more than any encoding may hold, so oversized input is
	// reported rather than truncated.
	b, err := io.ReadAll(io.LimitReader(r, crdt.DefaultMaxEncodedSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the input: %v", crdt.ErrUnavailable, err)
	}
	if len(b) > crdt.DefaultMaxEncodedSize {
		return nil, fmt.Errorf("%w: the input is longer than %d bytes, the most an encoding holds", crdt.ErrTooLarge, crdt.DefaultMaxEncodedSize)
	}
	return b, nil
}

// envelope reads the tag and version of an encoding without decoding its
// body; the type's own decoder then checks everything.
func envelope(data []byte) (crdt.TypeTag, uint64, error) {
	tag, v, err := wire.Envelope(data) // as every decoder reads it, with its errors
	if err != nil {
		return "", 0, fmt.Errorf("not a counterkit envelope ([tag, version, body]): %w", err)
	}
	return tag, v, nil
}

// Describe decodes data, whatever counterkit type it holds, and describes
// it. o are the windows a tgcounter, tpncounter or bounded is read with.
func Describe(data []byte, o decodeOpts) (*Description, error) {
	tag, version, err := envelope(data)
	if err != nil {
		return nil, err
	}
	d := &Description{Type: string(tag), Version: version, Bytes: len(data)}
	// decoded unmarshals data into v and reports whether that worked (err
	// holds the error).
	decoded := func(v encoding.BinaryUnmarshaler) bool {
		err = v.UnmarshalBinary(data)
		return err == nil
	}
	switch tag {
	case crdt.TagGCounter:
		var c gcounter.Counter
		if decoded(&c) {
			d.Value, d.Actors = exactValue(c.BigValue()), counts("", &c)
		}
	case crdt.TagPNCounter:
		var c pncounter.Counter
		if decoded(&c) {
			d.Value, d.Actors = exactValue(c.BigValue()), append(counts("P", c.P()), counts("N", c.N())...)
		}
	case crdt.TagTGCounter:
		var g *tpncounter.GCounter
		if g, err = tpncounter.NewGCounter(o.counter); err == nil && decoded(g) {
			d.Value, d.Actors, d.Stats, d.Window = exactValue(g.BigValue()), entries("", g), ptr(Stats(g.Stats())), historyWindow(g.Options())
			d.Fields = bases(map[string]tpncounter.Base{"base": g.Base()})
		}
	case crdt.TagTPNCounter:
		var c *tpncounter.Counter
		if c, err = tpncounter.New(o.counter); err == nil && decoded(c) {
			d.Value, d.Stats, d.Window = exactValue(c.BigValue()), ptr(Stats(c.Stats())), historyWindow(c.Options())
			d.Actors = append(entries("P", c.Positive()), entries("N", c.Negative())...)
			p, n := c.Bases()
			d.Fields = bases(map[string]tpncounter.Base{"base_p": p, "base_n": n})
		}
	case crdt.TagBounded:
		c, err := bounded.Decode(data, o.bounded)
		if err != nil {
			return nil, err
		}
		bo := c.Options()
		d.Value, d.Window, d.Fields = exactValue(c.BigValue()), &Window{Recent: bo.Window}, map[string]any{"bound": bo.Bound}
		if bo.Origin != "" {
			d.Fields["origin"] = string(bo.Origin)
		}
		for _, a := range c.Actors() {
			e, _ := c.Entry(a)
			d.Actors = append(d.Actors, ActorPart{Actor: string(a), Seq: e.Seq, Credits: ptr(e.Credits), Debits: ptr(e.Debits),
				Rights: ptr(e.Rights), Received: ptr(e.Received), Asked: ptr(e.Asked), Sent: e.Sent, History: txnsOf(e.Recent)})
		}
	case crdt.TagTallyShard, crdt.TagTally:
		return describeTally(data, d)
	case crdt.TagLogCell:
		var c deltalog.Cell
		if decoded(&c) {
			d.Value, d.Fields = c.Delta, map[string]any{"id": c.ID.String(), "kind": c.Kind.String(), "delta": c.Delta, "written": c.Written,
				"stats": logStats(c.Stats)}
		}
	case crdt.TagBalanceRow:
		var r balance.Row
		if decoded(&r) {
			d.Value, d.Fields = r.Amount, map[string]any{"update_id": r.UpdateID.String(), "kind": r.Kind.String(), "row_version": r.Version.String(),
				"amount": r.Amount, "covers": r.Covers, "settled": r.Settled}
			if r.Target != 0 {
				d.Fields["target"] = r.Target.String()
			}
		}
	case crdt.TagLedgerTxn:
		var r ledger.Record
		if decoded(&r) {
			d.Value, d.Fields = r.Amount, map[string]any{"txn": string(r.Txn), "amount": r.Amount, "writer": string(r.Writer),
				"at": r.At.UTC().Format(time.RFC3339Nano), "writer_version": r.Version}
			if r.Key != "" {
				d.Fields["key"] = r.Key
			}
		}
	case crdt.TagLedgerSeen:
		var seen ledger.Sightings
		if decoded(&seen) {
			for _, x := range seen {
				d.Actors = append(d.Actors, ActorPart{Actor: string(x.Writer), Version: x.Version, SeenAt: x.At.UTC().Format(time.RFC3339Nano)})
			}
		}
	default:
		return nil, fmt.Errorf("%w: unknown type tag %q", crdt.ErrTypeMismatch, tag)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// logStats are the fields of a deltalog's stats.
func logStats(s deltalog.Stats) map[string]any {
	return map[string]any{"count": s.Count, "sum": s.Sum, "min": s.Min, "max": s.Max, "sum_of_squares": s.SumSquares().String()}
}

func historyWindow(o tpncounter.Options) *Window {
	return &Window{HistoryLength: o.HistoryLength, FoldedLength: o.FoldedLength}
}

func counts(half string, g *gcounter.Counter) (out []ActorPart) {
	for a, n := range g.All() {
		out = append(out, ActorPart{Actor: string(a), Half: half, Count: ptr(n)})
	}
	return out
}

func entries(half string, g *tpncounter.GCounter) (out []ActorPart) {
	for _, a := range g.Actors() {
		e, _ := g.Entry(a)
		out = append(out, ActorPart{Actor: string(a), Half: half, Seq: e.Seq, Total: ptr(e.Total), Retired: e.Retired,
			History: txnsOf(e.History), Folded: txnsOf(e.Folded)})
	}
	return out
}

// txnsOf converts tpncounter's or bounded's transactions (nil for none).
func txnsOf[T ~struct {
	ID     crdt.TxnID
	Amount int64
}](ts []T) (out []Txn) {
	for _, t := range ts {
		out = append(out, Txn(t))
	}
	return out
}

// describeTally decodes a tally shard or tally with each aggregate kind in
// turn; the encoding names its kind, so exactly one can succeed.
func describeTally(data []byte, d *Description) (*Description, error) {
	var first error
	for _, t := range tallyKinds {
		fields, value, err := t.fields(data, d.Type)
		switch {
		case err == nil:
			d.Fields, d.Value = fields, value
			return d, nil
		case !errors.Is(err, crdt.ErrTypeMismatch):
			return nil, err
		}
		first = cmp.Or(first, err)
	}
	return nil, first
}

func tallyFields[A tally.Aggregate[A]](data []byte, typ string) (map[string]any, any, error) {
	var state A
	fields := map[string]any{}
	if typ == string(crdt.TagTallyShard) {
		s, err := tally.DecodeShard[A](data)
		if err != nil {
			return nil, nil, err
		}
		state = s.State
		fields["mutator"], fields["expires_at_us"] = string(s.Mutator), s.ExpiresAt
	} else {
		t, err := tally.DecodeTally[A](data)
		if err != nil {
			return nil, nil, err
		}
		state = t.State
		fields["folded_through_us"] = t.FoldedThrough
	}
	fields["kind"], fields["state"] = string(state.Kind()), fmt.Sprint(state)
	return fields, fields["state"], nil
}

func ptr[T any](v T) *T { return &v }

// sentinels are the sentinels errors are named by, most specific first:
// the adapter's own sentinel first where it has one (embedded.ErrLocked),
// then the crdt ones.
var sentinels = []cli.Sentinel{
	{Name: "embedded.ErrLocked, crdt.ErrUnavailable", Err: embedded.ErrLocked},
	{Name: "riak.ErrDefaultBucketType, crdt.ErrMisconfiguredStore", Err: riak.ErrDefaultBucketType},
	{Name: "crdt.ErrCorruptEncoding", Err: crdt.ErrCorruptEncoding},
	{Name: "crdt.ErrUnsupportedVersion", Err: crdt.ErrUnsupportedVersion},
	{Name: "crdt.ErrTypeMismatch", Err: crdt.ErrTypeMismatch},
	{Name: "crdt.ErrTooLarge", Err: crdt.ErrTooLarge},
	{Name: "crdt.ErrOverflow", Err: crdt.ErrOverflow},
	{Name: "crdt.ErrInvalidKey", Err: crdt.ErrInvalidKey},
	{Name: "crdt.ErrInvalidIdentifier", Err: crdt.ErrInvalidIdentifier},
	{Name: "crdt.ErrInvalidActor", Err: crdt.ErrInvalidActor},
	{Name: "crdt.ErrInvalidTxnID", Err: crdt.ErrInvalidTxnID},
	{Name: "crdt.ErrInvalidAmount", Err: crdt.ErrInvalidAmount},
	{Name: "crdt.ErrConflictingTransaction", Err: crdt.ErrConflictingTransaction},
	{Name: "crdt.ErrOutsideWindow", Err: crdt.ErrOutsideWindow},
	{Name: "crdt.ErrExpired", Err: crdt.ErrExpired},
	{Name: "crdt.ErrInsufficientRights", Err: crdt.ErrInsufficientRights},
	{Name: "crdt.ErrInvalidConfig", Err: crdt.ErrInvalidConfig},
	{Name: "crdt.ErrNotFound", Err: crdt.ErrNotFound},
	{Name: "crdt.ErrAmbiguousWrite", Err: crdt.ErrAmbiguousWrite},
	{Name: "crdt.ErrUnavailable", Err: crdt.ErrUnavailable},
	{Name: "crdt.ErrMisconfiguredStore", Err: crdt.ErrMisconfiguredStore},
}

// sentinelName names the sentinels err wraps, for messages.
func sentinelName(err error) string { return cli.SentinelNames(err, sentinels) }

func (d *Description) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "type\t%s\n", d.Type)
	fmt.Fprintf(tw, "version\t%d\n", d.Version)
	fmt.Fprintf(tw, "bytes\t%d\n", d.Bytes)
	if d.Value != nil {
		fmt.Fprintf(tw, "value\t%v\n", d.Value)
	}
	switch {
	case d.Window != nil && d.Window.Recent > 0:
		fmt.Fprintf(tw, "window\trecent %d\n", d.Window.Recent)
	case d.Window != nil:
		fmt.Fprintf(tw, "window\thistory %d, folded %d\n", d.Window.HistoryLength, d.Window.FoldedLength)
	}
	if s := d.Stats; s != nil {
		fmt.Fprintf(tw, "stats\tactors %d%s, transactions %d, history %d, folded %d, deferred %d, conflicts %d\n",
			s.Actors, cli.Either(s.Retired > 0, fmt.Sprintf(" (and %d retired)", s.Retired), ""), s.Transactions, s.History, s.Folded, s.Deferred, s.Conflicts)
	}
	for _, k := range slices.Sorted(maps.Keys(d.Fields)) {
		fmt.Fprintf(tw, "%s\t%v\n", k, d.Fields[k])
	}
	tw.Flush()
	if len(d.Actors) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if d.Type == string(crdt.TagLedgerSeen) {
		fmt.Fprintln(tw, "actor\tversion\tfirst seen")
		for _, a := range d.Actors {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", a.Actor, a.Version, a.SeenAt)
		}
		tw.Flush()
		return
	}
	if d.Type == string(crdt.TagBounded) {
		fmt.Fprintln(tw, "actor\tseq\tcredits\tdebits\trights\treceived\tasked\tsent\trecent")
		for _, a := range d.Actors {
			var sent []Txn // by recipient
			for _, to := range slices.Sorted(maps.Keys(a.Sent)) {
				sent = append(sent, Txn{crdt.TxnID(to), a.Sent[to]})
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", a.Actor, a.Seq, *a.Credits, *a.Debits,
				*a.Rights, *a.Received, *a.Asked, txns(sent), txns(a.History))
		}
		tw.Flush()
		return
	}
	fmt.Fprintln(tw, "actor\thalf\tcount/total\tseq\thistory\tfolded")
	for _, a := range d.Actors {
		n := *cmp.Or(a.Count, a.Total, new(int64)) // a count, else a total, else 0
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", a.Actor, cmp.Or(a.Half, "-"), n, a.Seq,
			cli.Either(a.Retired, "retired", txns(a.History)), cli.Either(a.Retired, "retired", txns(a.Folded)))
	}
	tw.Flush()
}

// txns prints id:amount pairs, or - for none.
func txns(ts []Txn) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s:%d", t.ID, t.Amount))
	}
	return cmp.Or(strings.Join(parts, " "), "-")
}

// exactValue is v as an int64, or as itself past int64 (SPEC.md 6.2).
// Base is what a half's Fold took out of its retired entries
// (tpncounter.Base): the entries' total, exact, the latest cutoff folded
// and their latest forgot time.
type Base struct {
	Cutoff time.Time `json:"cutoff"`
	Total  any       `json:"total"`
	Forgot time.Time `json:"forgot,omitzero"`
}

// String is the table form.
func (b Base) String() string {
	s := fmt.Sprintf("total %v, cutoff %s", b.Total, b.Cutoff.Format(time.RFC3339Nano))
	if !b.Forgot.IsZero() {
		s += ", forgot " + b.Forgot.Format(time.RFC3339Nano)
	}
	return s
}

// bases returns the fields of the halves' bases that are set, or nil.
func bases(halves map[string]tpncounter.Base) map[string]any {
	var out map[string]any
	for name, b := range halves {
		if b.Cutoff.IsZero() {
			continue // the half never folded
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = Base{Cutoff: b.Cutoff.UTC(), Total: exactValue(b.BigTotal()), Forgot: b.Forgot.UTC()}
	}
	return out
}

func exactValue(v *big.Int) any {
	if v.IsInt64() {
		return v.Int64()
	}
	return v
}
