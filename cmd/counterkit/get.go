package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/tpncounter"
)

const getUsage = `usage: counterkit get -store STORE -type TYPE [flags] KEY

Reads one key and prints its value and what is stored under it.

Sibling keys (-type ledger, gcounter, pncounter or bounded; any store): every
sibling is decoded and described as inspect does, and the value is the
merge of all of them, computed by the counter's own driver (ledger.Value,
statestore.Load, bounded's Merge) on exactly the siblings printed. A
ledger, gcounter or pncounter value past int64, which the driver's Value
refuses (crdt.ErrOverflow), is printed exact, from the merged state.
With -txn ID (-type ledger) get also prints what the merged state holds of
that transaction (unknown, in history or folded, and the copy that counts)
and the records of it in the same store, each decoded: the key's, and for a
key of the form ACCOUNT/N (a Sharded account's sub-key) ACCOUNT's, where a
Sharded account keeps them. Records kept in a store of their own
(ledger.Options.Records) are not read.

A balance.Transactions account (-type transactions; embedded and
cassandra): KEY is the account; its layout is read from its marker
(balance.AccountLayout), and the value is Transactions.Balance of that
layout, the summary its layout and Conflicts (two reads of each row
partition, at the ordinary level: Balance's, then Conflicts'; -complete
does not apply, and -max-rows is the reads' TxnOptions.BacklogRows, at
least 100,000). An account whose marker no Apply wrote is
crdt.ErrNotFound.

Partition keys (-type tally, deltalog or balance; embedded and cassandra):
every row is decoded and described, and the value is what the counter's own
reader returns on that snapshot (tally Read, deltalog Counters.Read, balance
Accounts.Balance and Conflicts; for a balance.Transactions row partition,
which holds row keys of balance.TxnRowKeyLen bytes, balance.EvaluateTxnRows,
Transactions' reading). The snapshot is one read of the partition,
at the store's ordinary level (Cassandra: QUORUM), or with -complete at
store.ReadComplete (Cassandra: ALL).

` + storeSpecHelp + `
An embedded directory is locked while open: a service holding it makes get
fail with embedded.ErrLocked (crdt.ErrUnavailable). get never creates a
directory or data file. A key with nothing stored is crdt.ErrNotFound; on
an embedded store get then verifies the data file, and a key missing from a
damaged file is reported as corruption (crdt.ErrCorruptEncoding), since the
damage may hide it. A stored value that fails its checksum or does not
decode is crdt.ErrCorruptEncoding, never "not found".
`

// sibling and partition key types.
var (
	siblingTypes   = []string{"ledger", "gcounter", "pncounter", "bounded"}
	partitionTypes = []string{"tally", "deltalog", "balance"}
)

// GetResult is what get prints.
type GetResult struct {
	Store string `json:"store"`
	Key   string `json:"key"`
	Type  string `json:"type"`
	// Value is the counter's value as its driver reads it.
	Value any `json:"value"`
	// Summary holds type-specific readings: a deltalog's stats and cells
	// read, a balance's conflicts and row classes, a tally's kind.
	Summary map[string]any `json:"summary,omitempty"`
	// SiblingCount and Siblings are the stored siblings (sibling keys).
	SiblingCount *int           `json:"sibling_count,omitempty"`
	Merged       *Description   `json:"merged,omitempty"`
	Siblings     []*Description `json:"siblings,omitempty"`
	// Rows are the stored rows (partition keys).
	Rows []RowDescription `json:"rows,omitempty"`
	// Transaction is what the key holds of one transaction (-txn).
	Transaction *TxnReport `json:"transaction,omitempty"`
}

// TxnReport is what a ledger key holds of one transaction: where the merge
// of its siblings knows it, the copy that counts, and its records in the
// same store (SPEC.md 6.11).
type TxnReport struct {
	ID string `json:"id"`
	// Status is the merged state's tpncounter.Status of the id: "unknown",
	// "in history" or "folded".
	Status string `json:"status"`
	// Owner is the copy that counts, when the state holds the id.
	Owner *TxnCopy `json:"owner,omitempty"`
	// Records are the record keys read, each with its siblings decoded:
	// the key's own and, for a key that may be a Sharded account's
	// sub-key (ACCOUNT/N), the account's.
	Records []TxnRecords `json:"records"`
}

// TxnCopy is a copy of a transaction a writer's entry holds.
type TxnCopy struct {
	Writer string `json:"writer"`
	Amount int64  `json:"amount"`
	Folded bool   `json:"folded"`
}

// TxnRecords are the siblings stored under one record key.
type TxnRecords struct {
	Account string         `json:"account"`
	Key     string         `json:"key"`
	Records []*Description `json:"records"`
}

// RowDescription is one stored row of a partition key.
type RowDescription struct {
	Row   string       `json:"row"`
	State *Description `json:"state"`
}

// commonFlags are the flags every store command shares.
type commonFlags struct {
	store   *string
	prefix  *string
	timeout *time.Duration
}

func addCommonFlags(fs *pflag.FlagSet) commonFlags {
	return commonFlags{
		store:   fs.String("store", "", "the store: embedded:DIR, cassandra:HOST[,HOST]/KEYSPACE or riak:ADDR/BUCKET_TYPE/BUCKET"),
		prefix:  fs.String("prefix", "", "cassandra: the table prefix (empty: the adapter's default, counterkit_)"),
		timeout: fs.Duration("timeout", 10*time.Second, "connect and request timeout (cassandra, riak)"),
	}
}

// addEmbeddedFlags are the flags of the commands that read or copy a whole
// embedded store.
func addEmbeddedFlags(fs *pflag.FlagSet) commonFlags {
	return commonFlags{
		store:   fs.String("store", "", "the embedded store: embedded:DIR"),
		prefix:  new(string),
		timeout: fs.Duration("timeout", 10*time.Minute, "the longest the command may take (a damaged file can make the engine loop)"),
	}
}

// checkTimeout refuses a timeout that is not positive: a usage error
// wrapping crdt.ErrInvalidConfig.
func checkTimeout(d time.Duration) error {
	return invalidIf(d <= 0, "-timeout must be positive, not %s", d)
}

// fail prints err for cmd and returns its exit status: 2 for a usage
// error, 1 otherwise. Internal store keys (binary, quoted with escapes) are
// left out of the message.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "counterkit %s: %s (%s)\n", printable(cmd), printable(redact(err)), sentinelName(err))
	return cli.Status(err)
}

// printable escapes control characters and bytes that are not UTF-8 in s
// (\xNN), so that a key read from standard input or a server's answer
// cannot drive the operator's terminal.
func printable(s string) string {
	bad := func(r rune) bool { return r == utf8.RuneError || unicode.IsControl(r) && r != '\t' }
	if !strings.ContainsFunc(s, bad) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if bad(r) && !(r == utf8.RuneError && n == 3) {
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// internalKey matches a quoted string holding escaped bytes: a store's
// internal key (a length prefix, a dot), which means nothing to an operator.
var internalKey = regexp.MustCompile(`"(?:[^"\\]|\\.)*\\(?:x[0-9a-fA-F]{2}|[0-7]{3}|u[0-9a-fA-F]{4}|a|b|f|v)(?:[^"\\]|\\.)*"`)

// redact returns err's message, without internal keys when err reports
// damage (crdt.ErrCorruptEncoding).
func redact(err error) string {
	if !errors.Is(err, crdt.ErrCorruptEncoding) {
		return err.Error()
	}
	return internalKey.ReplaceAllString(err.Error(), "(internal key)")
}

func runGet(args []string, stdout, stderr io.Writer) int {
	c := newCommand("get", getUsage, stderr)
	fs := c.fs
	cf := addCommonFlags(fs)
	typ := fs.String("type", "", "the key's type: ledger, gcounter, pncounter, bounded (sibling keys), tally, deltalog, balance (partition keys), transactions (a balance.Transactions account)")
	opts := addDecodeFlags(fs)
	maxRows := fs.Int("max-rows", balance.MaxBacklogRows, "partition keys: the most rows read (at least 1); -type transactions: its reads' BacklogRows")
	complete := fs.Bool("complete", false, "partition keys: read completely (store.ReadComplete; Cassandra: ALL) instead of at the ordinary level (QUORUM)")
	txn := fs.String("txn", "", "-type ledger: also print what the key holds of this transaction id, and its records in the same store")
	if code := c.parse(args); code >= 0 {
		return code
	}
	o, oerr := opts()
	spec, serr := parseStore(*cf.store)
	key := fs.Arg(0)
	isSibling, isPartition := slices.Contains(siblingTypes, *typ), slices.Contains(partitionTypes, *typ) || *typ == "transactions"
	if err := cmp.Or(checkTimeout(*cf.timeout),
		invalidIf(fs.NArg() != 1, "give exactly one KEY (got %d arguments)", fs.NArg()),
		invalidIf(*maxRows < 1, "-max-rows must be at least 1, not %d", *maxRows), oerr, serr,
		invalidIf(*typ == "transactions" && *maxRows < balance.MaxRows, "-max-rows is -type transactions' BacklogRows, at least %d, not %d", balance.MaxRows, *maxRows),
		invalidIf(!isSibling && !isPartition, "-type must be one of %s, not %q", strings.Join(slices.Concat(siblingTypes, partitionTypes, []string{"transactions"}), ", "), *typ),
		invalidIf(isPartition && spec.kind == "riak", "riak holds sibling keys only, not %s", *typ),
		invalidIf(fs.Changed("txn") && *typ != "ledger", "-txn applies to -type ledger only, not %s", *typ),
		cli.Usage(crdt.ValidateKey("key", key)), checkTxnFlag(fs.Changed("txn"), *txn)); err != nil {
		return fail(stderr, "get", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout+30*time.Second)
	defer cancel()
	b, err := openStore(ctx, spec, storeOpts{prefix: *cf.prefix, timeout: *cf.timeout})
	if err != nil {
		return fail(stderr, "get", err)
	}
	defer b.close()
	res := &GetResult{Store: spec.String(), Key: key, Type: *typ}
	switch {
	case isSibling:
		var id *crdt.TxnID
		if fs.Changed("txn") {
			id = ptr(crdt.TxnID(*txn))
		}
		err = getSiblings(ctx, b.siblings, key, *typ, o, id, res)
	case *typ == "transactions":
		err = getTransactions(ctx, b.partitions, key, *maxRows, res)
	default:
		err = getPartition(ctx, b.partitions, key, *typ, *maxRows, cli.Either(*complete, store.ReadComplete, store.ReadAny), res)
	}
	if errors.Is(err, crdt.ErrNotFound) && b.verify != nil {
		// A key can be missing because damage hides it: say so.
		if verr := b.verify(); verr != nil {
			err = fmt.Errorf("key %q not found in a damaged data file (the damage may hide it): %w", key, verr)
		}
	}
	switch {
	case errors.Is(err, crdt.ErrCorruptEncoding) && !isSibling:
		// A partition's rows carry no type: another type's rows fail to
		// decode as damaged ones do.
		err = fmt.Errorf("key %q: stored rows do not decode as %s rows: damaged, or another type's (tally, deltalog, balance, transactions): %w", key, *typ, err)
	case errors.Is(err, crdt.ErrCorruptEncoding):
		err = fmt.Errorf("key %q: stored data is damaged: %w", key, err)
	}
	return c.emitResult(stdout, res, err)
}

// getTransactions reads a balance.Transactions account as a Transactions
// of the layout its marker names reads it, with backlog as its
// BacklogRows: Balance, then Conflicts.
func getTransactions(ctx context.Context, st store.Partitions, account string, backlog int, res *GetResult) error {
	layout, ok, err := balance.AccountLayout(ctx, st, account)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: account %q has no layout marker (no Apply wrote it)", crdt.ErrNotFound, account)
	}
	layout.BacklogRows = backlog
	tx, err := balance.NewTransactions(st, layout)
	if err != nil {
		return err
	}
	v, err := tx.Balance(ctx, account)
	if err != nil {
		return err
	}
	conflicts, err := tx.Conflicts(ctx, account)
	if err != nil {
		return err
	}
	res.Value = v
	res.Summary = map[string]any{"partitions": layout.Partitions, "record_shards": layout.RecordShards,
		"retry_window": layout.RetryWindow.String(), "conflicts": conflictLines(conflicts)}
	return nil
}

// typeTags are the encodings each sibling type stores.
var typeTags = map[string]crdt.TypeTag{
	"ledger":    crdt.TagTPNCounter,
	"gcounter":  crdt.TagGCounter,
	"pncounter": crdt.TagPNCounter,
	"bounded":   crdt.TagBounded,
}

func getSiblings(ctx context.Context, st store.Siblings, key, typ string, o decodeOpts, txn *crdt.TxnID, res *GetResult) error {
	opts := o.counter
	values, err := fetchSiblings(ctx, st, key)
	if err != nil {
		return err
	}
	// Stores list siblings in orders of their own (Riak by value, the
	// embedded store by write): listed in byte order, the output is the
	// same on every store.
	values = slices.SortedFunc(slices.Values(values), bytes.Compare)
	for i, v := range values {
		d, err := Describe(v, o)
		if err != nil {
			return fmt.Errorf("sibling %d of %d: %w", i+1, len(values), err)
		}
		if d.Type != string(typeTags[typ]) {
			return fmt.Errorf("%w: sibling %d of %d is a %s, not a %s (-type %s)", crdt.ErrTypeMismatch, i+1, len(values), d.Type, typeTags[typ], typ)
		}
		res.Siblings = append(res.Siblings, d)
	}
	res.SiblingCount = ptr(len(values))
	frozen := &frozenSiblings{key: key, values: values}
	var state interface{ MarshalBinary() ([]byte, error) } // the merge of every sibling
	switch typ {
	case "ledger":
		l, err := ledger.New(frozen, key, ledger.Options{Actor: "counterkit", Counter: opts})
		if err != nil {
			return err
		}
		if res.Value, err = l.Value(ctx); errors.Is(err, crdt.ErrOverflow) {
			res.Value = nil // past int64 (SPEC.md 6.2): the merged state's is exact
		} else if err != nil {
			return err
		}
		if state, err = mergeAll(values, func(v []byte) (*tpncounter.Counter, error) {
			c, err := tpncounter.New(opts)
			if err == nil {
				err = c.UnmarshalBinary(v)
			}
			return c, err
		}); err != nil {
			return err
		}
		if res.Value == nil {
			res.Value = state.(*tpncounter.Counter).BigValue()
		}
		if txn != nil {
			if res.Transaction, err = txnReport(ctx, st, key, *txn, state.(*tpncounter.Counter), o); err != nil {
				return err
			}
		}
	case "gcounter":
		c, err := statestore.Load[gcounter.Counter](ctx, frozen, key)
		if err != nil {
			return err
		}
		res.Value, state = exactValue(c.BigValue()), c
	case "pncounter":
		c, err := statestore.Load[pncounter.Counter](ctx, frozen, key)
		if err != nil {
			return err
		}
		res.Value, state = exactValue(c.BigValue()), c
	case "bounded":
		// The merge of every sibling, as bounded.Account reads it (an
		// Account opens bound-0 counters only; this reads any bound).
		c, err := mergeAll(values, func(v []byte) (*bounded.Counter, error) { return bounded.Decode(v, o.bounded) })
		if err != nil {
			return err
		}
		res.Value, state = exactValue(c.BigValue()), c
	}
	merged, err := state.MarshalBinary()
	if err != nil {
		return err
	}
	// Siblings that each decode can merge to a state no decoder reads (a
	// bounded actor that forked): the refusal names the merge.
	if res.Merged, err = Describe(merged, o); err != nil && len(values) > 1 {
		err = fmt.Errorf("the merge of %d siblings: %w", len(values), err)
	}
	return err
}

// checkTxnFlag refuses a -txn that is given and not a valid transaction id:
// a usage error wrapping crdt.ErrInvalidTxnID.
func checkTxnFlag(given bool, txn string) error {
	if !given {
		return nil
	}
	return cli.Usage(crdt.TxnID(txn).Validate())
}

// txnReport reports what ledger key key holds of txn: state's (the merge
// of its siblings) status and owner of it, and the siblings of its record
// keys in st: key's and, when key has the form of a Sharded account's
// sub-key (ACCOUNT/N, N in 0..MaxShards-1), ACCOUNT's.
func txnReport(ctx context.Context, st store.Siblings, key string, txn crdt.TxnID, state *tpncounter.Counter, o decodeOpts) (*TxnReport, error) {
	r := &TxnReport{ID: string(txn), Status: state.Status(txn).String(), Records: []TxnRecords{}}
	if c, ok := state.Owner(txn); ok {
		r.Owner = &TxnCopy{Writer: string(c.Actor), Amount: c.Amount, Folded: c.Folded}
	}
	accounts := []string{key}
	if account, ok := ledger.ShardedAccount(key); ok {
		accounts = append(accounts, account)
	}
	for _, account := range accounts {
		rk := ledger.RecordKey(account, txn)
		recs, _, err := st.Fetch(ctx, rk)
		if err != nil {
			return nil, err
		}
		tr := TxnRecords{Account: account, Key: rk, Records: []*Description{}}
		for i, v := range slices.SortedFunc(slices.Values(recs), bytes.Compare) {
			d, err := Describe(v, o)
			if err != nil {
				return nil, fmt.Errorf("record key %s, sibling %d of %d: %w", rk, i+1, len(recs), err)
			}
			tr.Records = append(tr.Records, d)
		}
		r.Records = append(r.Records, tr)
	}
	return r, nil
}

// fetchSiblings fetches the siblings of key, or fails with crdt.ErrNotFound.
func fetchSiblings(ctx context.Context, st store.Siblings, key string) ([][]byte, error) {
	values, _, err := st.Fetch(ctx, key)
	if err == nil && len(values) == 0 {
		err = fmt.Errorf("%w: key %q has no stored value", crdt.ErrNotFound, key)
	}
	return values, err
}

// mergeAll decodes every value (at least one) and merges them into the
// first.
func mergeAll[T interface{ Merge(T) error }](values [][]byte, decode func([]byte) (T, error)) (T, error) {
	out, err := decode(values[0])
	for _, v := range values[1:] {
		var s T
		if err == nil {
			if s, err = decode(v); err == nil {
				err = out.Merge(s)
			}
		}
	}
	return out, err
}

// readPartition takes a snapshot of one partition and copies it to memory
// (partitionCopy).
func readPartition(ctx context.Context, st store.Partitions, key string, limit int, level store.Read) ([]store.Row, *partitionCopy, error) {
	rows, err := st.Snapshot(ctx, key, limit, level)
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%w: key %q has no stored rows", crdt.ErrNotFound, key)
	}
	cp := &partitionCopy{Partitions: memory.NewPartitions()}
	if err := copyRows(ctx, cp.Partitions, key, rows); err != nil {
		return nil, nil, err
	}
	return rows, cp, nil
}

// copyRows copies rows into partition key of dst. The rows are copied at
// write timestamp 1, below every timestamp a driver writes with, so the
// driver's own writes and deletes on the copy behave as they would on the
// store.
func copyRows(ctx context.Context, dst *memory.Partitions, key string, rows []store.Row) error {
	for rest := rows; len(rest) > 0; rest = rest[min(len(rest), store.MaxBatch):] {
		muts := make([]store.Mutation, min(len(rest), store.MaxBatch))
		for i, r := range rest[:len(muts)] {
			muts[i] = store.Mutation{Partition: key, Op: store.OpPut, Key: r.Key, Value: r.Value, Timestamp: 1}
		}
		if err := dst.Apply(ctx, muts); err != nil {
			return err
		}
	}
	return nil
}

func getPartition(ctx context.Context, st store.Partitions, key, typ string, limit int, level store.Read, res *GetResult) error {
	rows, cp, err := readPartition(ctx, st, key, limit, level)
	if err != nil {
		return err
	}
	for _, r := range rows {
		name, err := rowName(typ, r.Key)
		if err != nil {
			return err
		}
		d, err := Describe(r.Value, decodeOpts{})
		if err != nil {
			return fmt.Errorf("row %s: %w", name, err)
		}
		res.Rows = append(res.Rows, RowDescription{Row: name, State: d})
	}
	switch typ {
	case "tally":
		kind, _ := res.Rows[0].State.Fields["kind"].(string)
		t, err := tallyKindNamed(tally.Kind(kind))
		if err == nil {
			res.Value, err = t.read(ctx, cp, key)
		}
		res.Summary = map[string]any{"kind": kind}
		return err
	case "deltalog":
		c, err := deltalog.New(cp, deltalog.Options{})
		if err != nil {
			return err
		}
		r, err := c.Read(ctx, key)
		if err != nil {
			return err
		}
		res.Value = r.Value
		res.Summary = logStats(r.Stats)
		res.Summary["cells_read"] = r.Cells
	case "balance":
		// A partition holding a row key of a Transactions row partition
		// is read as Transactions reads it; any other as Accounts does.
		if slices.ContainsFunc(rows, func(r store.Row) bool { return len(r.Key) == balance.TxnRowKeyLen }) {
			view, err := balance.EvaluateTxnRows(key, rows)
			if err != nil {
				return err
			}
			res.Value = view.Value
			res.Summary = balanceSummary(view, view.Conflicts)
			return nil
		}
		a, err := balance.New(cp, balance.Options{})
		if err != nil {
			return err
		}
		if res.Value, err = a.Balance(ctx, key); err != nil {
			return err
		}
		conflicts, err := a.Conflicts(ctx, key)
		if err != nil {
			return err
		}
		// The rows Balance read, each key agreeing with its value: their
		// classes for the summary.
		decoded := make([]balance.Row, len(rows))
		for i, r := range rows {
			if err := decoded[i].UnmarshalBinary(r.Value); err != nil {
				return err
			}
		}
		view, err := balance.Evaluate(decoded)
		if err != nil {
			return err
		}
		res.Summary = balanceSummary(view, conflicts)
	}
	return nil
}

// balanceSummary is get's summary of a balance partition read as view,
// with conflicts.
func balanceSummary(view balance.View, conflicts []balance.Conflict) map[string]any {
	return map[string]any{"live_rows": len(view.Live), "valid_sums": len(view.Valid),
		"invalid_sums": len(view.InvalidSums), "invalid_tombstones": len(view.InvalidTombstones), "conflicts": conflictLines(conflicts)}
}

// conflictLines describes conflicting update ids, one line each.
func conflictLines(conflicts []balance.Conflict) []string {
	cs := []string{}
	for _, c := range conflicts {
		cs = append(cs, fmt.Sprintf("%s counted %d refused %v", c.UpdateID, c.Counted, c.Refused))
	}
	return cs
}

// rowName names a stored row by its decoded row key.
func rowName(typ string, key []byte) (string, error) {
	switch typ {
	case "tally":
		switch {
		case string(key) == tally.TallyRowKey:
			return "tally", nil
		case len(key) > 1 && key[0] == 's':
			return "shard " + string(key[1:]), nil
		}
		return "", fmt.Errorf("%w: tally: unknown row key %q", crdt.ErrCorruptEncoding, key)
	case "deltalog":
		id, kind, err := deltalog.DecodeKey(key)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s", id, kind), nil
	default:
		if len(key) == balance.TxnRowKeyLen { // a row of a Transactions row partition, at its place
			at, k, err := balance.DecodeTxnRowKey(key)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %s %s at %s", k.UpdateID, k.Kind, k.Version, time.UnixMicro(at).UTC().Format(time.RFC3339Nano)), nil
		}
		k, err := balance.DecodeKey(key)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s %s", k.UpdateID, k.Kind, k.Version), nil
	}
}

// tallyKind is what the commands do with a tally of one aggregate kind:
// read it (get), fold its shards (gc tally) and describe an encoding
// (inspect).
type tallyKind struct {
	kind   tally.Kind
	read   func(ctx context.Context, st store.Partitions, key string) (any, error)
	gc     func(ctx context.Context, st store.Partitions, key string, cfg tally.Options, dry bool) (tally.GCPlan, error)
	fields func(data []byte, typ string) (map[string]any, any, error)
}

func tallyKindOf[A tally.Aggregate[A]]() tallyKind {
	var a A
	return tallyKind{kind: a.Kind(), read: tallyRead[A], gc: tallyGC[A], fields: tallyFields[A]}
}

// tallyKinds are the aggregate kinds, in the order inspect tries them.
var tallyKinds = []tallyKind{tallyKindOf[*tally.Sum](), tallyKindOf[*tally.Min](), tallyKindOf[*tally.Max](),
	tallyKindOf[*tally.Stats](), tallyKindOf[*tally.Distinct]()}

// tallyKindNamed returns the aggregate kind k, or an error wrapping
// crdt.ErrTypeMismatch.
func tallyKindNamed(k tally.Kind) (tallyKind, error) {
	if i := slices.IndexFunc(tallyKinds, func(t tallyKind) bool { return t.kind == k }); i >= 0 {
		return tallyKinds[i], nil
	}
	return tallyKind{}, fmt.Errorf("%w: tally: unknown aggregate kind %q", crdt.ErrTypeMismatch, k)
}

func tallyRead[A tally.Aggregate[A]](ctx context.Context, st store.Partitions, key string) (any, error) {
	c, err := tally.New[A](st, key, tally.Options{})
	if err != nil {
		return nil, err
	}
	v, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if s, ok := any(v).(*tally.Sum); ok {
		return s.Value(), nil
	}
	return fmt.Sprint(v), nil
}

// nonEmptyLine matches a line with text, which a section indents.
var nonEmptyLine = regexp.MustCompile(`(?m)^.+$`)

func (r *GetResult) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "store\t%s\n", r.Store)
	fmt.Fprintf(tw, "key\t%s\n", r.Key)
	fmt.Fprintf(tw, "type\t%s\n", r.Type)
	fmt.Fprintf(tw, "value\t%v\n", r.Value)
	if r.SiblingCount != nil {
		fmt.Fprintf(tw, "siblings\t%d\n", *r.SiblingCount)
	}
	if r.Rows != nil {
		fmt.Fprintf(tw, "rows\t%d\n", len(r.Rows))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Summary)) {
		fmt.Fprintf(tw, "%s\t%v\n", k, r.Summary[k])
	}
	tw.Flush()
	section := func(title string, d *Description) {
		var buf bytes.Buffer
		d.writeTable(&buf)
		fmt.Fprintf(w, "\n%s\n%s", title, nonEmptyLine.ReplaceAllString(buf.String(), "  $0"))
	}
	if r.Merged != nil {
		section("merged", r.Merged)
	}
	for i, d := range r.Siblings {
		section(fmt.Sprintf("sibling %d of %d", i+1, len(r.Siblings)), d)
	}
	for _, row := range r.Rows {
		section("row "+row.Row, row.State)
	}
	if t := r.Transaction; t != nil {
		fmt.Fprintf(w, "\ntransaction %s\n", t.ID)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  status\t%s\n", t.Status)
		if o := t.Owner; o != nil {
			fmt.Fprintf(tw, "  owner\t%s, amount %d, folded %t\n", o.Writer, o.Amount, o.Folded)
		}
		for _, rs := range t.Records {
			fmt.Fprintf(tw, "  records of %s\t%d (%s)\n", rs.Account, len(rs.Records), rs.Key)
		}
		tw.Flush()
		for _, rs := range t.Records {
			for i, d := range rs.Records {
				section(fmt.Sprintf("record %d of %d of %s", i+1, len(rs.Records), rs.Account), d)
			}
		}
	}
}
