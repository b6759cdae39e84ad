package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// testConfig retries once, at once, so that a script of two faults fails a
// whole write.
var testConfig = config{Actor: "test", RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}}

// newTestService serves a service over st with httptest.
func newTestService(t *testing.T, st store.Siblings) (*service, *httptest.Server) {
	t.Helper()
	svc, err := newService(st, testConfig, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(func() {
		srv.Close()
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
	})
	return svc, srv
}

// call sends a request (body "" for none) and returns the status and body.
func call(t *testing.T, baseURL, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, baseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// callJSON is call expecting status want, decoding the body into v.
func callJSON(t *testing.T, baseURL, method, path, body string, want int, v any) {
	t.Helper()
	status, b := call(t, baseURL, method, path, body)
	if status != want {
		t.Fatalf("%s %s %s: status %d, want %d; body %s", method, path, body, status, want, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

func balance(t *testing.T, baseURL, account string) int64 {
	t.Helper()
	var v valueResponse
	callJSON(t, baseURL, "GET", "/accounts/"+account, "", http.StatusOK, &v)
	return v.Balance
}

// stored reads account's balance straight from st, through a Book of
// another actor, so that only what landed counts.
func stored(t *testing.T, st store.Siblings, account string) int64 {
	t.Helper()
	b, err := ledger.NewBook(st, ledger.BookOptions{Options: ledger.Options{Actor: "auditor"}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := b.Value(context.Background(), accountKey(account))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCreditDebitValueHistory(t *testing.T) {
	mem := memory.NewSiblings()
	_, srv := newTestService(t, mem)

	var w writeResponse
	callJSON(t, srv.URL, "POST", "/accounts/alice/credit", `{"txn": "t1", "amount": 100}`, http.StatusOK, &w)
	if w.Outcome != "applied" || w.Balance != 100 || w.Op != "credit" || w.Amount != 100 || w.Attempts != 1 ||
		!strings.HasPrefix(w.Owner, "test~") {
		t.Fatalf("credit: %+v", w)
	}
	callJSON(t, srv.URL, "POST", "/accounts/alice/debit", `{"txn": "t2", "amount": 30}`, http.StatusOK, &w)
	if w.Outcome != "applied" || w.Balance != 70 || w.Op != "debit" || w.Amount != 30 {
		t.Fatalf("debit: %+v", w)
	}
	callJSON(t, srv.URL, "POST", "/accounts/bob/credit", `{"txn": "t1", "amount": 5}`, http.StatusOK, &w)

	if got := balance(t, srv.URL, "alice"); got != 70 {
		t.Fatalf("alice: %d, want 70", got)
	}
	if got := balance(t, srv.URL, "bob"); got != 5 {
		t.Fatalf("bob: %d, want 5 (txn ids are per account)", got)
	}
	if got := balance(t, srv.URL, "nobody"); got != 0 {
		t.Fatalf("an account never written: %d, want 0", got)
	}
	if got := stored(t, mem, "alice"); got != 70 {
		t.Fatalf("alice in the store: %d, want 70", got)
	}

	var h historyResponse
	callJSON(t, srv.URL, "GET", "/accounts/alice/history", "", http.StatusOK, &h)
	if h.Account != "alice" || h.Balance != 70 || len(h.Actors) != 1 || h.Stats.Transactions != 2 || len(h.Conflicts) != 0 {
		t.Fatalf("history: %+v", h)
	}
	a := h.Actors[0]
	if !strings.HasPrefix(a.Actor, "test~") || a.Credits == nil || a.Debits == nil ||
		len(a.Credits.History) != 1 || a.Credits.History[0] != (txnJSON{Txn: "t1", Amount: 100}) ||
		len(a.Debits.History) != 1 || a.Debits.History[0] != (txnJSON{Txn: "t2", Amount: 30}) {
		t.Fatalf("history entry: %+v credits %+v debits %+v", a, a.Credits, a.Debits)
	}

	var health healthResponse
	callJSON(t, srv.URL, "GET", "/healthz", "", http.StatusOK, &health)
	if health.Status != "ok" || health.Actor != "test" || health.Book.Open != 3 {
		t.Fatalf("healthz: %+v", health)
	}
}

// countPuts counts the Puts to its store.
type countPuts struct {
	store.Siblings
	puts atomic.Int64
}

func (c *countPuts) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	c.puts.Add(1)
	return c.Siblings.Put(ctx, key, actor, value, token)
}

// TestReadsWriteNothing: a GET, of an account never written or of one
// that was, puts nothing into the store.
func TestReadsWriteNothing(t *testing.T) {
	st := &countPuts{Siblings: memory.NewSiblings()}
	_, srv := newTestService(t, st)
	reads := func(account string) {
		t.Helper()
		before := st.puts.Load()
		var h historyResponse
		callJSON(t, srv.URL, "GET", "/accounts/"+account+"/history", "", http.StatusOK, &h)
		if h.Account != account || account == "nobody" && (h.Balance != 0 || len(h.Actors) != 0) {
			t.Fatalf("history of %s: %+v", account, h)
		}
		balance(t, srv.URL, account)
		callJSON(t, srv.URL, "GET", "/accounts/"+account+"/history", "", http.StatusOK, nil)
		if n := st.puts.Load() - before; n != 0 {
			t.Fatalf("GETs of %s: %d Puts, want none", account, n)
		}
	}
	reads("nobody")
	if sibs, _, err := st.Fetch(context.Background(), accountKey("nobody")); err != nil || len(sibs) != 0 {
		t.Fatalf("an account only read: %d siblings (%v), want none", len(sibs), err)
	}
	callJSON(t, srv.URL, "POST", "/accounts/gina/credit", `{"txn": "t1", "amount": 10}`, http.StatusOK, nil)
	reads("gina")
}

func TestRetryIsIdempotent(t *testing.T) {
	mem := memory.NewSiblings()
	_, srv := newTestService(t, mem)
	for _, op := range []string{"credit", "debit"} {
		body := `{"txn": "` + op + `-1", "amount": 40}`
		var first, retry writeResponse
		callJSON(t, srv.URL, "POST", "/accounts/carol/"+op, body, http.StatusOK, &first)
		callJSON(t, srv.URL, "POST", "/accounts/carol/"+op, body, http.StatusOK, &retry)
		if first.Outcome != "applied" || retry.Outcome != "duplicate" {
			t.Fatalf("%s: outcomes %q then %q, want applied then duplicate", op, first.Outcome, retry.Outcome)
		}
		retry.Outcome = first.Outcome
		if retry != first {
			t.Fatalf("%s: the retry answered %+v, the first request %+v", op, retry, first)
		}
	}
	if got := stored(t, mem, "carol"); got != 0 {
		t.Fatalf("carol: %d, want 40 - 40 = 0", got)
	}
}

func TestConflictingAmount(t *testing.T) {
	mem := memory.NewSiblings()
	_, srv := newTestService(t, mem)
	callJSON(t, srv.URL, "POST", "/accounts/dave/credit", `{"txn": "t1", "amount": 10}`, http.StatusOK, nil)
	for _, c := range []struct{ path, body string }{
		{"/accounts/dave/credit", `{"txn": "t1", "amount": 11}`}, // another amount
		{"/accounts/dave/debit", `{"txn": "t1", "amount": 10}`},  // another sign
	} {
		var e errorResponse
		callJSON(t, srv.URL, "POST", c.path, c.body, http.StatusConflict, &e)
		if !strings.Contains(e.Error, "conflicting amounts") {
			t.Fatalf("%s %s: %+v", c.path, c.body, e)
		}
	}
	if got := stored(t, mem, "dave"); got != 10 {
		t.Fatalf("dave: %d, want 10", got)
	}
}

func TestBadRequests(t *testing.T) {
	_, srv := newTestService(t, memory.NewSiblings())
	long := strings.Repeat("x", 300) // the key would exceed crdt.MaxKeyLen
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": 10`},                               // truncated
		{"POST", "/accounts/a/credit", `not json`},                                                 //
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": 10, "currency": "EUR"}`},           // unknown field
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": 10} {"txn": "t2"}`},                // trailing data
		{"POST", "/accounts/a/credit", `{"txn": "t1"}`},                                            // no amount
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": 0}`},                               //
		{"POST", "/accounts/a/debit", `{"txn": "t1", "amount": -5}`},                               //
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": 1.5}`},                             //
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": "10"}`},                            //
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": 9223372036854775808}`},             // beyond int64
		{"POST", "/accounts/a/credit", `{"amount": 10}`},                                           // no txn
		{"POST", "/accounts/a/credit", `{"txn": "bad\u0001id", "amount": 10}`},                     // control character
		{"POST", "/accounts/a/credit", `{"txn": "` + strings.Repeat("t", 300) + `", "amount": 1}`}, // too long
		{"POST", "/accounts/a/credit", `{"txn": "t1", "amount": 1, "pad": "` + strings.Repeat(" ", maxBody) + `"}`},
		{"POST", "/accounts/" + long + "/credit", `{"txn": "t1", "amount": 1}`},
		{"GET", "/accounts/" + long, ""},
		{"GET", "/accounts/" + long + "/history", ""},
	} {
		var e errorResponse
		callJSON(t, srv.URL, c.method, c.path, c.body, http.StatusBadRequest, &e)
		if e.Error == "" {
			t.Fatalf("%s %s: no error message", c.path, c.body)
		}
	}
	// The mux's own answers: 404 and 405 in JSON too.
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/accounts/a/credit", http.StatusMethodNotAllowed},
		{"DELETE", "/accounts/a", http.StatusMethodNotAllowed},
		{"GET", "/nothing", http.StatusNotFound},
		{"POST", "/accounts/a/transfer", http.StatusNotFound},
	} {
		var e errorResponse
		callJSON(t, srv.URL, c.method, c.path, "", c.status, &e)
		if e.Error == "" {
			t.Fatalf("%s %s: no error message", c.method, c.path)
		}
	}
	// An empty account id: the mux redirects to the cleaned path, where a
	// POST is not allowed.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Post(srv.URL+"/accounts//credit", "application/json", strings.NewReader(`{"txn": "t1", "amount": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/accounts/credit" {
		t.Fatalf("POST /accounts//credit: %d to %q, want 307 to /accounts/credit", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := balance(t, srv.URL, "a"); got != 0 {
		t.Fatalf("a: %d after refused requests, want 0", got)
	}
}

// TestIDsJSONWouldMerge: encoding/json decodes each invalid UTF-8 byte and
// each lone surrogate escape to U+FFFD, so that two different ids would
// decode to one and the second transaction be answered duplicate, never
// counted. The service refuses them instead.
func TestIDsJSONWouldMerge(t *testing.T) {
	mem := memory.NewSiblings()
	_, srv := newTestService(t, mem)
	for _, body := range []string{
		"{\"txn\": \"inv\xff\", \"amount\": 10}",
		"{\"txn\": \"inv\xfe\", \"amount\": 20}",
		"{\"txn\": \"inv\", \"amount\": 30, \"x\xff\": 1}", // not UTF-8 outside the id
		`{"txn": "inv\udc00", "amount": 40}`,
		`{"txn": "inv\udfff", "amount": 50}`,
		`{"txn": "inv\ufffd", "amount": 60}`,
		"{\"txn\": \"inv\uFFFD\", \"amount\": 70}",
	} {
		var e errorResponse
		callJSON(t, srv.URL, "POST", "/accounts/frank/credit", body, http.StatusBadRequest, &e)
		if e.Error == "" {
			t.Fatalf("%q: no error message", body)
		}
	}
	if got := stored(t, mem, "frank"); got != 0 {
		t.Fatalf("frank: %d after refused requests, want 0", got)
	}
	// A valid surrogate pair is a character like any other.
	var w writeResponse
	callJSON(t, srv.URL, "POST", "/accounts/frank/credit", `{"txn": "inv\ud83d\ude00", "amount": 5}`, http.StatusOK, &w)
	if w.Outcome != "applied" || w.Txn != "inv\U0001F600" {
		t.Fatalf("an id with a surrogate pair: %+v", w)
	}
}

func TestMetrics(t *testing.T) {
	// The first Put (the account's) loses its acknowledgement: the ledger
	// retries, finds the transaction landed, and the metrics count the
	// ambiguous write and the retry.
	f := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodPut)})
	_, srv := newTestService(t, f)
	body := `{"txn": "t1", "amount": 10}`
	callJSON(t, srv.URL, "POST", "/accounts/erin/credit", body, http.StatusOK, nil)
	callJSON(t, srv.URL, "POST", "/accounts/erin/credit", body, http.StatusOK, nil)
	balance(t, srv.URL, "erin")

	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	text := string(b)
	for _, want := range []string{
		`counterkit_operation_duration_seconds_count{counterkit_component="ledger",counterkit_operation="update",counterkit_outcome="applied"} 1`,
		`counterkit_operation_duration_seconds_count{counterkit_component="ledger",counterkit_operation="update",counterkit_outcome="duplicate"} 1`,
		`counterkit_operation_duration_seconds_count{counterkit_component="ledger",counterkit_operation="read",counterkit_outcome="ok"} 1`,
		`counterkit_duplicates_total{counterkit_component="ledger",counterkit_operation="update",counterkit_outcome="duplicate"} 1`,
		`counterkit_writes_ambiguous_total{counterkit_component="ledger",counterkit_operation="update",counterkit_outcome="applied"} 1`,
		`counterkit_retries_total{counterkit_component="ledger",counterkit_operation="update",counterkit_outcome="applied"} 1`,
		`db_client_operation_duration_seconds_count{counterkit_outcome="ambiguous",db_operation_name="put",error_type="ambiguous_write"} 1`,
		// The transaction's record, written once the credit landed; the
		// retry finds it and writes nothing.
		`db_client_operation_duration_seconds_count{counterkit_outcome="ok",db_operation_name="put"} 1`,
		`counterkit_operation_duration_seconds_bucket{counterkit_component="ledger",counterkit_operation="update",counterkit_outcome="applied",le="0.001"}`,
		`service_book_ledgers{state="idle"} 1`,
		`service_book_opened_total 1`,
		`target_info{service_name="counterkit-service"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

// TestAmbiguousWrites: when every attempt of a write ends ambiguous, the
// client gets 503 and retries with the same txn; the transaction counts
// once, whether the failed request's write landed or not.
func TestAmbiguousWrites(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults []faulty.Fault // of the Puts: RetryCount is 1, so two attempts
		landed int64          // what the store holds after the 503
	}{
		{"last attempt landed", []faulty.Fault{faulty.Lose, faulty.LoseAck}, 25},
		{"nothing landed", []faulty.Fault{faulty.Lose, faulty.Lose}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewSiblings()
			f := faulty.NewSiblings(mem, faulty.Options{Policy: faulty.Only(faulty.Script(c.faults...), faulty.MethodPut)})
			_, srv := newTestService(t, f)
			body := `{"txn": "pay-1", "amount": 25}`

			status, b := call(t, srv.URL, "POST", "/accounts/frank/credit", body)
			var e errorResponse
			if err := json.Unmarshal(b, &e); err != nil || status != http.StatusServiceUnavailable ||
				!strings.Contains(e.Retry, "same txn") {
				t.Fatalf("status %d, body %s, want 503 telling to retry with the same txn", status, b)
			}
			if got := stored(t, mem, "frank"); got != c.landed {
				t.Fatalf("after the 503 the store holds %d, want %d", got, c.landed)
			}

			var w writeResponse
			callJSON(t, srv.URL, "POST", "/accounts/frank/credit", body, http.StatusOK, &w)
			if w.Balance != 25 || (w.Outcome != "applied" && w.Outcome != "duplicate") {
				t.Fatalf("retry: %+v", w)
			}
			callJSON(t, srv.URL, "POST", "/accounts/frank/credit", body, http.StatusOK, &w)
			if w.Outcome != "duplicate" || w.Balance != 25 {
				t.Fatalf("second retry: %+v", w)
			}
			if got := stored(t, mem, "frank"); got != 25 {
				t.Fatalf("the store holds %d, want 25: counted once", got)
			}
		})
	}
}

// TestPendingLandsWithoutARetry: a write left pending by an ambiguous
// error lands within config.LandEvery although its client never retries.
func TestPendingLandsWithoutARetry(t *testing.T) {
	mem := memory.NewSiblings()
	f := faulty.NewSiblings(mem, faulty.Options{Policy: faulty.Only(faulty.Script(faulty.Lose, faulty.Lose), faulty.MethodPut)})
	cfg := testConfig
	cfg.LandEvery = 10 * time.Millisecond
	svc, err := newService(f, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- svc.Serve(ctx, nil, ln, 5*time.Second) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()

	callJSON(t, "http://"+ln.Addr().String(), "POST", "/accounts/hal/credit", `{"txn": "t1", "amount": 4}`, http.StatusServiceUnavailable, nil)
	for deadline := time.Now().Add(5 * time.Second); stored(t, mem, "hal") != 4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the pending write did not land within 5s; book %+v", svc.book.Stats())
		}
	}
	if st := svc.book.Stats(); st.Pending != 0 {
		t.Fatalf("book %+v after landing", st)
	}
}

func TestUnavailableStore(t *testing.T) {
	// The first read is refused (the ledger does not retry a read).
	f := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodFetch)})
	_, srv := newTestService(t, f)
	var e errorResponse
	callJSON(t, srv.URL, "POST", "/accounts/gina/debit", `{"txn": "t1", "amount": 3}`, http.StatusServiceUnavailable, &e)
	if !strings.Contains(e.Retry, "same txn") {
		t.Fatalf("503 body %+v", e)
	}
	var w writeResponse
	callJSON(t, srv.URL, "POST", "/accounts/gina/debit", `{"txn": "t1", "amount": 3}`, http.StatusOK, &w)
	if w.Outcome != "applied" || w.Balance != -3 {
		t.Fatalf("retry: %+v", w)
	}
}

// TestGracefulShutdown cancels Serve's context while a credit is in flight
// and a write is pending: the listener closes at once, the credit finishes
// with 200, and the pending write lands before Serve returns.
func TestGracefulShutdown(t *testing.T) {
	mem := memory.NewSiblings()
	parked, release := make(chan struct{}), make(chan struct{})
	f := faulty.NewSiblings(mem, faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.Lose, faulty.Lose), faulty.MethodPut),
		Hook: func(ctx context.Context, c faulty.Call, after bool) error {
			if c.Method == faulty.MethodPut && c.Key == accountKey("slow") && !after {
				close(parked)
				<-release
			}
			return nil
		},
	})
	svc, err := newService(f, testConfig, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- svc.Serve(ctx, nil, ln, 10*time.Second) }()

	// Both attempts of this credit are lost: 503, and its ledger holds
	// the write as pending.
	callJSON(t, url, "POST", "/accounts/pending/credit", `{"txn": "t1", "amount": 7}`, http.StatusServiceUnavailable, nil)
	if got := stored(t, mem, "pending"); got != 0 {
		t.Fatalf("pending: %d stored, want 0", got)
	}

	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post(url+"/accounts/slow/credit", "application/json", bytes.NewBufferString(`{"txn": "t1", "amount": 9}`))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, b, err}
	}()
	<-parked
	cancel() // the signal

	// New connections are refused once Shutdown has closed the listener.
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts after the shutdown started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a request in flight", err)
	default:
	}

	close(release)
	a := <-answered
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("the credit in flight: %d %s %v, want 200", a.status, a.body, a.err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if got := stored(t, mem, "slow"); got != 9 {
		t.Fatalf("slow: %d stored, want 9", got)
	}
	if got := stored(t, mem, "pending"); got != 7 {
		t.Fatalf("pending: %d stored after the shutdown, want 7 (LandPending)", got)
	}
}

// TestShutdownTimeout: a request still running when the timeout ends is
// cancelled, and Serve still returns.
func TestShutdownTimeout(t *testing.T) {
	parked := make(chan struct{})
	var once sync.Once
	f := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Hook: func(ctx context.Context, c faulty.Call, after bool) error {
			if c.Method == faulty.MethodPut && !after {
				once.Do(func() { close(parked) })
				<-ctx.Done() // stuck until cancelled
				return ctx.Err()
			}
			return nil
		},
	})
	svc, err := newService(f, testConfig, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- svc.Serve(ctx, nil, ln, 200*time.Millisecond) }()
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/accounts/stuck/credit", "application/json",
			strings.NewReader(`{"txn": "t1", "amount": 1}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-parked
	cancel()
	select {
	case err := <-served:
		// The cancelled write left nothing pending that the store could
		// take, or LandPending failed on it: either way Serve returned.
		t.Logf("Serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the shutdown timeout")
	}
	if err := <-done; err != nil && !errors.Is(err, io.EOF) {
		t.Logf("the stuck request ended with %v", err)
	}
}

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want error
		log  string
	}{
		{nil, errUsage, "-data DIR is required"},
		{[]string{"-data", t.TempDir(), "-actor", ""}, errUsage, "-actor: counterkit: invalid actor id"},
		{[]string{"-data", t.TempDir(), "-actor", strings.Repeat("a", ledger.MaxActorLen+1)}, errUsage, "MaxActorLen"},
		{[]string{"-data", t.TempDir(), "-max-open", "-1"}, errUsage, "invalid flags"},
		{[]string{"-data", t.TempDir(), "extra"}, errUsage, "unexpected arguments"},
		{[]string{"-max-open", "many"}, errUsage, "invalid value"},
		{[]string{"-data", t.TempDir(), "-land-every", "-1s"}, errUsage, "must not be negative"},
		{[]string{"-data", t.TempDir(), "-expire-every", "-1h"}, errUsage, "must not be negative"},
		{[]string{"-h"}, flag.ErrHelp, "-retire-after"},
	} {
		var log bytes.Buffer
		err := run(context.Background(), nil, c.args, &log)
		if !errors.Is(err, c.want) || !strings.Contains(log.String(), c.log) {
			t.Errorf("run %q: %v, log %q; want %v and %q", c.args, err, log.String(), c.want, c.log)
		}
	}
}

// TestEscapedAccountIDs: an account id holding characters a path segment
// must escape is its own account under its escaped form, "/" included
// (ServeMux alone answers 404 for a segment of exactly %2F).
func TestEscapedAccountIDs(t *testing.T) {
	_, srv := newTestService(t, memory.NewSiblings())
	ids := []string{"/", "//", "/x", "x/", "a/b", "..", ".", "%", "%2F", "a b", "ü", "?", "#"}
	for i, id := range ids {
		p := "/accounts/" + escapeSegment(id)
		var w writeResponse
		callJSON(t, srv.URL, "POST", p+"/credit", fmt.Sprintf(`{"txn": "t", "amount": %d}`, i+1), http.StatusOK, &w)
		if w.Outcome != "applied" {
			t.Fatalf("credit %q: %+v", id, w)
		}
		callJSON(t, srv.URL, "POST", p+"/debit", `{"txn": "d", "amount": 1}`, http.StatusOK, &w)
	}
	for i, id := range ids {
		p := "/accounts/" + escapeSegment(id)
		var v valueResponse
		callJSON(t, srv.URL, "GET", p, "", http.StatusOK, &v)
		if v.Balance != int64(i) {
			t.Errorf("account %q: balance %d, want %d", id, v.Balance, i)
		}
		var h historyResponse
		callJSON(t, srv.URL, "GET", p+"/history", "", http.StatusOK, &h)
		if h.Account != id || h.Balance != int64(i) {
			t.Errorf("history of %q: account %q balance %d, want %d", id, h.Account, h.Balance, i)
		}
	}
	// Paths around them are still the mux's: 404 and 405 in JSON.
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/accounts/%2F/nothing", http.StatusNotFound},
		{"POST", "/accounts/%2Fx/nothing", http.StatusNotFound},
		{"GET", "/accounts/%2F/credit", http.StatusNotFound},
		{"DELETE", "/accounts/a%2Fb", http.StatusMethodNotAllowed},
	} {
		status, body := call(t, srv.URL, c.method, c.path, "")
		var e errorResponse
		if status != c.want || json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Errorf("%s %s: %d %s, want %d with a JSON error", c.method, c.path, status, body, c.want)
		}
	}
}

// escapeSegment escapes id as one path segment: url.PathEscape, and "."
// and ".." escaped whole, which a client would otherwise resolve.
func escapeSegment(id string) string {
	if id == "." || id == ".." {
		return strings.Repeat("%2E", len(id))
	}
	return url.PathEscape(id)
}
