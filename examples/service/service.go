package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// config is what the command line sets, plus what tests change.
type config struct {
	Actor       crdt.ActorID
	RetireAfter time.Duration
	MaxOpen     int
	// LandEvery is how often Serve lands the Book's pending writes
	// (Book.LandPending) while it runs; zero never does.
	LandEvery time.Duration
	// RetryCount and Backoff are ledger.Options'; zero means the defaults.
	RetryCount int
	Backoff    ledger.Backoff
}

// bookOptions returns the Book's options, without an observer.
func (cfg config) bookOptions() ledger.BookOptions {
	return ledger.BookOptions{
		Options: ledger.Options{
			Actor:       cfg.Actor,
			RetireAfter: cfg.RetireAfter,
			RetryCount:  cfg.RetryCount,
			Backoff:     cfg.Backoff,
		},
		MaxOpen: cfg.MaxOpen,
	}
}

// service serves the accounts of one Book. It is safe for concurrent use.
type service struct {
	cfg     config
	book    *ledger.Book
	store   store.Siblings // the Book's store, observed
	metrics *metrics
	log     *slog.Logger
	mux     *http.ServeMux

	inFlight atomic.Int64 // handlers running, for a shutdown that timed out
}

// accountKey is the store key of account id.
func accountKey(id string) string { return "account/" + id }

// maxBody bounds a request body.
const maxBody = 4 << 10

// newService returns a service over st: one Book writing as cfg.Actor,
// reporting to an OpenTelemetry MeterProvider that /metrics exports.
func newService(st store.Siblings, cfg config, log *slog.Logger) (*service, error) {
	m, err := newMetrics()
	if err != nil {
		return nil, err
	}
	st = observe.Siblings(st, m.observer)
	opts := cfg.bookOptions()
	opts.Observer = m.observer
	book, err := ledger.NewBook(st, opts)
	if err == nil {
		err = m.watchBook(book)
	}
	if err != nil {
		return nil, errors.Join(err, m.close())
	}
	s := &service{cfg: cfg, book: book, store: st, metrics: m, log: log, mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /accounts/{id}/credit", s.handleWrite("credit", book.Credit))
	s.mux.HandleFunc("POST /accounts/{id}/debit", s.handleWrite("debit", book.Debit))
	s.mux.HandleFunc("GET /accounts/{id}", s.handleValue)
	s.mux.HandleFunc("GET /accounts/{id}/history", s.handleHistory)
	s.mux.Handle("GET /metrics", m.handler)
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	return s, nil
}

// ServeHTTP serves one request, counting it as in flight. The mux's own
// answers (no pattern matched) stay as they are, a redirect to a cleaned
// path included, but for 404 and 405, which answer in JSON.
func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	if h := s.slashAccount(r); h != nil {
		h.ServeHTTP(w, r)
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		w = &jsonErrors{ResponseWriter: w, r: r}
	}
	s.mux.ServeHTTP(w, r)
}

// slashAccount returns the handler of a request for the account whose id
// is "/" (escaped %2F), with its id set, or nil for any other request.
// ServeMux does not match such a segment to a {id} wildcard (it takes a
// segment that decodes to "/" for a trailing slash), so the request is
// matched with another id in its place.
func (s *service) slashAccount(r *http.Request) http.Handler {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/accounts/")
	if !ok || len(rest) < 3 || !strings.EqualFold(rest[:3], "%2F") || (len(rest) > 3 && rest[3] != '/') {
		return nil
	}
	u := *r.URL
	u.RawPath = "/accounts/-" + rest[3:]
	u.Path = "/accounts/-" + rest[3:]
	if p, err := url.PathUnescape(u.RawPath); err == nil {
		u.Path = p
	}
	other := r.WithContext(r.Context())
	other.URL = &u
	h, pattern := s.mux.Handler(other)
	if pattern == "" {
		return nil
	}
	r.SetPathValue("id", "/")
	return h
}

// jsonErrors replaces the plain text body of a 404 or 405 with an
// errorResponse.
type jsonErrors struct {
	http.ResponseWriter
	r        *http.Request
	replaced bool
}

func (j *jsonErrors) WriteHeader(status int) {
	var msg string
	switch status {
	case http.StatusNotFound:
		msg = fmt.Sprintf("no endpoint %s %s", j.r.Method, j.r.URL.Path)
	case http.StatusMethodNotAllowed:
		msg = fmt.Sprintf("method %s not allowed for %s; allowed: %s", j.r.Method, j.r.URL.Path, j.Header().Get("Allow"))
	default:
		j.ResponseWriter.WriteHeader(status)
		return
	}
	j.replaced = true
	writeJSON(j.ResponseWriter, status, errorResponse{Error: msg})
}

func (j *jsonErrors) Write(b []byte) (int, error) {
	if j.replaced {
		return len(b), nil
	}
	return j.ResponseWriter.Write(b)
}

// Serve serves HTTP on ln until ctx is done, then shuts down: it stops
// accepting, waits up to timeout for the requests in flight (after which it
// cancels them and closes their connections), and lands the Book's pending
// writes. stop, if not nil, is called when the shutdown starts.
//
// While it serves, it lands pending writes every config.LandEvery: a write
// whose outcome the store left unknown is held by its ledger until the
// account's next request, and the ledger package asks that it land well
// within RetireAfter, whether or not its client retries (Ledger.Pending).
func (s *service) Serve(ctx context.Context, stop func(), ln net.Listener, timeout time.Duration) error {
	// Requests do not end with ctx: a shutdown lets them finish first.
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	landed := make(chan struct{})
	if s.cfg.LandEvery > 0 {
		go s.landLoop(loopCtx, landed)
	} else {
		close(landed)
	}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-served: // the listener failed
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		if stop != nil {
			stop()
		}
		s.log.Info("shutting down: no new connections, waiting for requests in flight", "timeout", timeout)
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		if serr := srv.Shutdown(sctx); serr != nil {
			s.log.Warn("requests still in flight after the timeout: cancelling them", "err", serr)
			cancelRequests()
			_ = srv.Close()
			s.waitIdle(2 * time.Second)
		}
		cancel()
		<-served // http.ErrServerClosed
	}
	stopLoop()
	<-landed
	lctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	pending := s.book.Stats().Pending
	if lerr := s.book.LandPending(lctx); lerr != nil {
		s.log.Error("pending writes not landed; their clients were told 503 and retry with the same txn", "err", lerr)
		return errors.Join(err, fmt.Errorf("land pending writes: %w", lerr))
	}
	s.log.Info("pending writes landed", "ledgers", pending)
	return err
}

// landLoop lands the Book's pending writes every s.cfg.LandEvery until ctx
// is done, then closes done.
func (s *service) landLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(s.cfg.LandEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if s.book.Stats().Pending == 0 {
			continue
		}
		if err := s.book.LandPending(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("pending writes not landed yet; trying again", "err", err)
		}
	}
}

// waitIdle waits up to d for the handlers still running to return.
func (s *service) waitIdle(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end) && s.inFlight.Load() > 0; {
		time.Sleep(10 * time.Millisecond)
	}
}

// Close releases the metrics pipeline. The store is the caller's.
func (s *service) Close() error { return s.metrics.close() }

// writeRequest is the body of a credit or debit.
type writeRequest struct {
	Txn    string `json:"txn"`
	Amount int64  `json:"amount"`
}

// writeResponse answers a credit or debit, first or retried.
type writeResponse struct {
	Account string `json:"account"`
	Op      string `json:"op"` // credit or debit
	Txn     string `json:"txn"`
	Amount  int64  `json:"amount"`
	// Outcome is applied (this request wrote the transaction), duplicate
	// or duplicate_folded (it was already stored: a retry).
	Outcome string `json:"outcome"`
	// Balance is the account's balance as this write saw it.
	Balance int64 `json:"balance"`
	// Owner is the writer (incarnation) whose copy of the transaction
	// counts, as this write saw the account. A transaction delivered to two
	// replicas at once may be answered applied by both, each naming its
	// own writer: Owner alone does not run a side effect once.
	Owner string `json:"owner"`
	// Attempts is how many store writes the ledger tried.
	Attempts int `json:"attempts"`
}

// errorResponse is the body of every answer that is not 200 (but for a
// 307 redirect to a cleaned path, which has none).
type errorResponse struct {
	Error string `json:"error"`
	// Retry says whether and how to retry.
	Retry string `json:"retry,omitempty"`
	// Outcome names the ledger outcome where there is one (superseded).
	Outcome string `json:"outcome,omitempty"`
}

func (s *service) handleWrite(op string, apply func(context.Context, string, crdt.TxnID, int64) (ledger.BookResult, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var req writeRequest
		if err := decodeBody(w, r, &req, "txn", "amount"); err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
			return
		}
		txn, err := crdt.NewTxnID(req.Txn)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: `"txn": ` + err.Error()})
			return
		}
		if strings.ContainsRune(req.Txn, utf8.RuneError) {
			// encoding/json decodes a lone surrogate escape (\udc00) as
			// U+FFFD: ids that differ only there would be one transaction.
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: `"txn" must not contain U+FFFD (a lone surrogate escape decodes to it)`})
			return
		}
		if req.Amount <= 0 {
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: fmt.Sprintf(`"amount" must be a positive integer, not %d`, req.Amount)})
			return
		}
		res, err := apply(r.Context(), accountKey(id), txn, req.Amount)
		if err != nil {
			s.fail(w, r, err, true)
			return
		}
		if res.Outcome == tpncounter.Superseded {
			writeJSON(w, http.StatusConflict, errorResponse{
				Error: fmt.Sprintf("transaction %q is stored with amount %d by %s, which counts instead of this %s of %d",
					txn, res.Owner.Amount, res.Owner.Actor, op, req.Amount),
				Outcome: observe.Superseded,
			})
			return
		}
		writeJSON(w, http.StatusOK, writeResponse{
			Account: id, Op: op, Txn: req.Txn, Amount: req.Amount,
			Outcome:  outcomeName(res.Outcome),
			Balance:  res.Value,
			Owner:    string(res.Owner.Actor),
			Attempts: res.Attempts,
		})
	}
}

// outcomeNames name the outcomes as package observe does.
var outcomeNames = map[tpncounter.Outcome]string{tpncounter.Applied: observe.Applied, tpncounter.Duplicate: observe.Duplicate,
	tpncounter.DuplicateFolded: observe.DuplicateFolded, tpncounter.Superseded: observe.Superseded}

func outcomeName(o tpncounter.Outcome) string {
	if name, ok := outcomeNames[o]; ok {
		return name
	}
	return o.String()
}

type valueResponse struct {
	Account string `json:"account"`
	Balance int64  `json:"balance"`
}

func (s *service) handleValue(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, err := s.book.Value(r.Context(), accountKey(id))
	if err != nil {
		s.fail(w, r, err, false)
		return
	}
	writeJSON(w, http.StatusOK, valueResponse{Account: id, Balance: v})
}

// historyResponse shows an account's stored counter: per actor entry
// (every incarnation of every service that wrote it), its recent
// transactions and folded total, credits and debits apart.
type historyResponse struct {
	Account   string         `json:"account"`
	Balance   int64          `json:"balance"`
	Actors    []actorHistory `json:"actors"`
	Stats     statsJSON      `json:"stats"`
	Conflicts []conflictJSON `json:"conflicts"`
}

type actorHistory struct {
	Actor   string     `json:"actor"`
	Credits *entryJSON `json:"credits,omitempty"`
	Debits  *entryJSON `json:"debits,omitempty"`
}

// entryJSON is a tpncounter.Entry. Amounts are magnitudes: a debit's are
// positive too.
type entryJSON struct {
	Seq uint64 `json:"seq"`
	// FoldedTotal is the sum of the transactions the actor folded out of
	// its history (for a retired entry, of all it counted).
	FoldedTotal int64 `json:"folded_total"`
	// History is the actor's recent transactions, oldest first.
	History []txnJSON `json:"history"`
	// Folded is its record of recently folded ids, oldest first.
	Folded  []txnJSON `json:"folded"`
	Retired bool      `json:"retired,omitempty"`
}

type txnJSON struct {
	Txn    string `json:"txn"`
	Amount int64  `json:"amount"`
}

type statsJSON struct {
	Actors       int `json:"actors"`
	Retired      int `json:"retired"`
	Transactions int `json:"transactions"`
	History      int `json:"history"`
	Folded       int `json:"folded"`
	Conflicts    int `json:"conflicts"`
}

type conflictJSON struct {
	Txn     string     `json:"txn"`
	Counted copyJSON   `json:"counted"`
	Copies  []copyJSON `json:"copies"`
}

type copyJSON struct {
	Actor  string `json:"actor"`
	Amount int64  `json:"amount"`
}

// handleHistory fetches the account's siblings and shows their merge: what
// the store holds, without the writes the Book has not seen land. It writes
// nothing (Book.Find would compact this actor's entry and write the key
// back, creating it for an account never written).
func (s *service) handleHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c, err := s.stored(r.Context(), accountKey(id))
	if err != nil {
		s.fail(w, r, err, false)
		return
	}
	writeJSON(w, http.StatusOK, history(id, c))
}

// stored reads key's siblings from the store and returns their merge.
func (s *service) stored(ctx context.Context, key string) (*tpncounter.Counter, error) {
	if err := crdt.ValidateKey("ledger key", key); err != nil {
		return nil, err
	}
	sibs, _, err := s.store.Fetch(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("ledger %q: fetch: %w", key, err)
	}
	// The Book's ledgers use the default counter options too.
	c, err := tpncounter.New(tpncounter.Options{})
	if err != nil {
		return nil, err
	}
	for i, b := range sibs {
		if err := c.MergeBinary(b); err != nil {
			return nil, fmt.Errorf("ledger %q: sibling %d of %d: %w", key, i+1, len(sibs), err)
		}
	}
	return c, nil
}

// history describes c.
func history(id string, c *tpncounter.Counter) historyResponse {
	p, n := c.Positive(), c.Negative()
	actors := append(p.Actors(), n.Actors()...)
	slices.Sort(actors)
	actors = slices.Compact(actors)
	entry := func(g *tpncounter.GCounter, a crdt.ActorID) *entryJSON {
		e, ok := g.Entry(a)
		if !ok {
			return nil
		}
		return &entryJSON{Seq: e.Seq, FoldedTotal: e.Total, History: txns(e.History), Folded: txns(e.Folded), Retired: e.Retired}
	}
	st := c.Stats()
	out := historyResponse{
		Account: id, Balance: c.Value(), Actors: []actorHistory{}, Conflicts: []conflictJSON{},
		Stats: statsJSON{Actors: st.Actors, Retired: st.Retired, Transactions: st.Transactions,
			History: st.History, Folded: st.Folded, Conflicts: st.Conflicts},
	}
	for _, a := range actors {
		out.Actors = append(out.Actors, actorHistory{Actor: string(a), Credits: entry(p, a), Debits: entry(n, a)})
	}
	for _, cf := range c.Conflicts() {
		cj := conflictJSON{Txn: string(cf.ID), Counted: copyJSON{Actor: string(cf.Counted.Actor), Amount: cf.Counted.Amount}}
		for _, cp := range cf.Copies {
			cj.Copies = append(cj.Copies, copyJSON{Actor: string(cp.Actor), Amount: cp.Amount})
		}
		out.Conflicts = append(out.Conflicts, cj)
	}
	return out
}

func txns(ts []tpncounter.Txn) []txnJSON {
	out := make([]txnJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, txnJSON{Txn: string(t.ID), Amount: t.Amount})
	}
	return out
}

type healthResponse struct {
	Status string `json:"status"`
	Actor  string `json:"actor"`
	// Book is ledger.BookStats.
	Book struct {
		Open    int    `json:"open"`
		InUse   int    `json:"in_use"`
		Pending int    `json:"pending"`
		Opened  uint64 `json:"opened"`
		Evicted uint64 `json:"evicted"`
	} `json:"book"`
}

func (s *service) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := healthResponse{Status: "ok", Actor: string(s.book.Actor())}
	st := s.book.Stats()
	h.Book.Open, h.Book.InUse, h.Book.Pending, h.Book.Opened, h.Book.Evicted = st.Open, st.InUse, st.Pending, st.Opened, st.Evicted
	writeJSON(w, http.StatusOK, h)
}

// fail answers err from the Book. write says whether the request was a
// credit or debit, which a client retries with the same txn.
func (s *service) fail(w http.ResponseWriter, r *http.Request, err error, write bool) {
	status, retry := http.StatusInternalServerError, ""
	switch {
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		status, retry = http.StatusServiceUnavailable, "the write may or may not have landed: retry with the same txn and amount, which counts it once"
		if !write {
			retry = "retry: the store may or may not have taken this request's write-back, which changes no balance"
		}
	case errors.Is(err, crdt.ErrUnavailable), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		status, retry = http.StatusServiceUnavailable, "the store is unavailable: retry"
		if write {
			retry = "the store is unavailable: retry with the same txn and amount, which counts it once"
		}
	case errors.Is(err, crdt.ErrConflictingTransaction):
		status = http.StatusConflict // the txn is stored with another amount or sign
	case errors.Is(err, crdt.ErrOutsideWindow):
		status = http.StatusConflict // a retry too late to be recognised
	case errors.Is(err, crdt.ErrInvalidTxnID), errors.Is(err, crdt.ErrInvalidAmount), errors.Is(err, crdt.ErrInvalidKey):
		status = http.StatusBadRequest
	case errors.Is(err, crdt.ErrOverflow):
		status = http.StatusUnprocessableEntity // the balance would not fit in an int64
	}
	if status >= 500 {
		w.Header().Set("Retry-After", "1")
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	writeJSON(w, status, errorResponse{Error: err.Error(), Retry: retry})
}

// decodeBody decodes one JSON object of at most maxBody bytes into v,
// refusing a body that is not UTF-8 (encoding/json would replace each
// invalid byte with U+FFFD, so that "inv\xff" and "inv\xfe" decode to one
// id), unknown fields and trailing data. A key given twice takes its last
// value, as encoding/json does. Keys must be one of fields exactly:
// encoding/json would take "TXN" or "Txn" as txn, so that a body with
// "txn" and "Txn" would name one transaction to whatever reads the key
// "txn" and another to the service.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, fields ...string) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if !utf8.Valid(body) {
		return errors.New("body: not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("body: data after the JSON object")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !slices.Contains(fields, k) {
			return fmt.Errorf("body: unknown field %q", k)
		}
		// A key's last value counts, but decoding leaves a field as it
		// was for null: {"amount": 7, "amount": null} would credit 7.
		if string(keys[k]) == "null" {
			return fmt.Errorf("body: field %q is null", k)
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
