package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
)

// The retry window with the service's defaults: every ledger.Options field
// that bears on it is left zero, as main leaves it with its default flags,
// so a retry within ledger.DefaultRetryWindow (24 hours) of a
// transaction's first application is recognised whatever the rate of
// credits in between (SPEC.md 6.11). Each scenario runs against the
// memory store, and against forgetRecords, which hides the ledger's
// transaction records: there the ledger recognises retries only within
// its counter's history (tpncounter HistoryLength + FoldedLength
// transactions per writer), and the scenarios see the double counts
// TestWithoutRecordsRetriesCountTwice expects.

// defaultConfig is config as main builds it with its default flags; the
// periodic landing (LandEvery) belongs to Serve, which these tests do not
// run.
var defaultConfig = config{Actor: "svc"}

// forgetRecords is a store whose transaction records (ledger.IsRecordKey)
// always read empty and whose record writes are dropped: a ledger over it
// knows only what its counter's history holds.
type forgetRecords struct{ store.Siblings }

func (f forgetRecords) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if ledger.IsRecordKey(key) {
		return nil, nil, nil
	}
	return f.Siblings.Fetch(ctx, key)
}

func (f forgetRecords) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if ledger.IsRecordKey(key) {
		return nil
	}
	return f.Siblings.Put(ctx, key, actor, value, token)
}

// newDefaultService returns a service with defaultConfig over st.
func newDefaultService(t *testing.T, st store.Siblings) *service {
	t.Helper()
	svc, err := newService(st, defaultConfig, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
	})
	return svc
}

// credit sends a credit to h in process (no network) and decodes the
// answer, which must be 200.
func credit(t *testing.T, h http.Handler, account, txn string, amount int64) writeResponse {
	t.Helper()
	w, err := tryCredit(h, account, txn, amount)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// tryCredit is credit for any goroutine: it returns the failure.
func tryCredit(h http.Handler, account, txn string, amount int64) (writeResponse, error) {
	body := fmt.Sprintf(`{"txn": %q, "amount": %d}`, txn, amount)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/accounts/"+account+"/credit", strings.NewReader(body)))
	var w writeResponse
	if rec.Code != http.StatusOK {
		return w, fmt.Errorf("credit %s %s: status %d, body %s", account, body, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &w); err != nil {
		return w, fmt.Errorf("credit %s %s: %v in %s", account, body, err, rec.Body)
	}
	return w, nil
}

// lateRetry credits pay-0 with 100, then others other transactions of 1,
// then pay-0 again, and returns the answer to that retry and the balance
// stored. With the retry recognised: outcome duplicate and 100 + others.
func lateRetry(t *testing.T, st store.Siblings, others int) (retry writeResponse, stored int64) {
	t.Helper()
	svc := newDefaultService(t, st)
	if w := credit(t, svc, "hot", "pay-0", 100); w.Outcome != "applied" {
		t.Fatalf("pay-0: %+v", w)
	}
	// The other credits come from 16 clients at once, as on a busy
	// account (the Book's ledger groups them into shared writes).
	const clients = 16
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + c; i <= others; i += clients {
				w, err := tryCredit(svc, "hot", "pay-"+strconv.Itoa(i), 1)
				if err != nil || w.Outcome != "applied" {
					t.Errorf("pay-%d: %+v %v", i, w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	retry = credit(t, svc, "hot", "pay-0", 100)
	v, err := svc.book.Value(context.Background(), accountKey("hot"))
	if err != nil {
		t.Fatal(err)
	}
	return retry, v
}

// TestRetryAfterOtherCredits: pay-0 credited 100, 21 other credits of 1
// (more than the counter's history holds), pay-0 retried over HTTP: the
// retry is answered as a duplicate and the balance is 121.
func TestRetryAfterOtherCredits(t *testing.T) {
	mem := memory.NewSiblings()
	svc := newDefaultService(t, mem)
	srv := httptest.NewServer(svc)
	defer srv.Close()
	var w writeResponse
	callJSON(t, srv.URL, "POST", "/accounts/hot/credit", `{"txn": "pay-0", "amount": 100}`, http.StatusOK, &w)
	for i := 1; i <= 21; i++ {
		callJSON(t, srv.URL, "POST", "/accounts/hot/credit", fmt.Sprintf(`{"txn": "pay-%d", "amount": 1}`, i), http.StatusOK, &w)
	}
	callJSON(t, srv.URL, "POST", "/accounts/hot/credit", `{"txn": "pay-0", "amount": 100}`, http.StatusOK, &w)
	if !isDuplicate(w.Outcome) || w.Balance != 121 {
		t.Fatalf("retry of pay-0 after 21 other credits: outcome %q, balance %d; want duplicate, 121", w.Outcome, w.Balance)
	}
	if got := balance(t, srv.URL, "hot"); got != 121 {
		t.Fatalf("balance %d, want 121", got)
	}
	if got := stored(t, mem, "hot"); got != 121 {
		t.Fatalf("stored %d, want 121", got)
	}
}

// TestRetryAfterTenThousandCredits: a retry after 10,000 other credits on
// the account, seconds after the first application and so well inside the
// window, is a duplicate. The credits go to the handler in process.
func TestRetryAfterTenThousandCredits(t *testing.T) {
	const others = 10_000
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			st := sc.open(t)
			retry, v := lateRetry(t, st, others)
			if !isDuplicate(retry.Outcome) || retry.Balance != 100+others || v != 100+others {
				t.Fatalf("retry of pay-0 after %d other credits: %+v, balance %d; want duplicate, %d", others, retry, v, 100+others)
			}
			if got := stored(t, st, "hot"); got != 100+others {
				t.Fatalf("stored %d, want %d", got, 100+others)
			}
		})
	}
}

// isDuplicate reports whether outcome answers a retry: duplicate, or
// duplicate_folded when the ledger knew the transaction from its folded
// ids.
func isDuplicate(outcome string) bool { return outcome == "duplicate" || outcome == "duplicate_folded" }

// deliveryResult is what concurrentDeliveries saw.
type deliveryResult struct {
	answers map[string]int // outcome (or "status N") → requests
	applied map[string]int // txn → requests answered applied
	balance int64          // stored
	want    int64          // sum of the distinct amounts
}

// concurrentDeliveries sends ids transactions, each deliveries times, all
// at once over HTTP to services (round robin; several share st as replicas
// behind a load balancer would), in an order drawn from seed. Transaction
// i has amount i+1, so any double count changes the sum.
func concurrentDeliveries(t *testing.T, st store.Siblings, services, ids, deliveries int, seed int64) deliveryResult {
	t.Helper()
	var urls []string
	for range services {
		srv := httptest.NewServer(newDefaultService(t, st))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	type request struct {
		txn    string
		amount int64
	}
	var reqs []request
	res := deliveryResult{answers: map[string]int{}, applied: map[string]int{}}
	for i := range ids {
		r := request{txn: fmt.Sprintf("order-%d", i), amount: int64(i + 1)}
		res.want += r.amount
		for range deliveries {
			reqs = append(reqs, r)
		}
	}
	rand.New(rand.NewSource(seed)).Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: len(reqs)}}
	defer client.CloseIdleConnections()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for n, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			body := fmt.Sprintf(`{"txn": %q, "amount": %d}`, r.txn, r.amount)
			answer := func() string {
				resp, err := client.Post(urls[n%len(urls)]+"/accounts/hot/credit", "application/json", strings.NewReader(body))
				if err != nil {
					return "error " + err.Error()
				}
				defer resp.Body.Close()
				var w writeResponse
				if err := json.NewDecoder(resp.Body).Decode(&w); err != nil || resp.StatusCode != http.StatusOK {
					return fmt.Sprintf("status %d", resp.StatusCode)
				}
				return w.Outcome
			}()
			mu.Lock()
			res.answers[answer]++
			if answer == "applied" {
				res.applied[r.txn]++
			}
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	res.balance = stored(t, st, "hot")
	return res
}

// testSeed is COUNTERKIT_SEED when set, else a fresh seed; the test logs
// it with the command that replays it.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed, err := strconv.ParseInt(os.Getenv("COUNTERKIT_SEED"), 10, 64)
	if err != nil {
		if os.Getenv("COUNTERKIT_SEED") != "" { // a mistyped replay must not run another seed
			t.Fatalf("COUNTERKIT_SEED: %v", err)
		}
		seed = rand.Int63()
	}
	t.Logf("seed %d; replay: COUNTERKIT_SEED=%d go test -C examples/service -run '^%s$' .", seed, seed, strings.Split(t.Name(), "/")[0])
	return seed
}

// TestWithoutRecordsRetriesCountTwice runs the scenarios above over
// forgetRecords, the broken variant whose ledger keeps no transaction
// records: each sees the double count its check above catches.
func TestWithoutRecordsRetriesCountTwice(t *testing.T) {
	t.Run("after 21 credits", func(t *testing.T) {
		retry, v := lateRetry(t, forgetRecords{memory.NewSiblings()}, 21)
		if retry.Outcome != "applied" || v != 221 {
			t.Fatalf("retry %+v, balance %d; want applied and 221 without records", retry, v)
		}
	})
	t.Run("after 10,000 credits", func(t *testing.T) {
		retry, v := lateRetry(t, forgetRecords{memory.NewSiblings()}, 10_000)
		if retry.Outcome != "applied" || v != 200+10_000 {
			t.Fatalf("retry %+v, balance %d; want applied and %d without records", retry, v, 200+10_000)
		}
	})
	t.Run("concurrent deliveries", func(t *testing.T) {
		r := concurrentDeliveries(t, forgetRecords{memory.NewSiblings()}, 1, 40, 5, testSeed(t))
		t.Logf("answers %v, balance %d", r.answers, r.balance)
		if r.balance <= r.want {
			t.Fatalf("balance %d, want more than %d without records (a retry counted twice)", r.balance, r.want)
		}
	})
}
