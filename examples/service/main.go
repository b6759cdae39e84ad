// Command service is a small HTTP service keeping many accounts' balances in
// the durable embedded store (adapters/embedded), as one actor: one
// ledger.Book holds a ledger per account.
//
//	POST /accounts/{id}/credit   {"txn": "order-17", "amount": 250}
//	POST /accounts/{id}/debit    {"txn": "refund-3", "amount": 40}
//	GET  /accounts/{id}          the balance
//	GET  /accounts/{id}/history  every actor's recent transactions and folded totals
//	GET  /metrics                Prometheus text: the ledger's operations, outcomes, retries
//	GET  /healthz
//
// Credits and debits are idempotent by txn within ledger.Options.RetryWindow
// (SPEC.md 6.11). README.md gives the flags, every answer (200 applied,
// duplicate or duplicate_folded; 400; 409, superseded or not; 422; 503:
// retry with the same txn and amount; 500; 404, 405 and the mux's 307) and
// the graceful shutdown.
//
//	go -C examples/service run . -data /tmp/counterkit-service -addr localhost:8080
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, stop, os.Args[1:], os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// errUsage marks a bad command line (exit status 2).
var errUsage = errors.New("usage")

// run parses args, opens the store and serves until ctx is done, then shuts
// down. stop is called once the shutdown starts, so that a second signal
// ends the process at once. Logs go to logw.
func run(ctx context.Context, stop func(), args []string, logw io.Writer) error {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	fs.SetOutput(logw)
	addr := fs.String("addr", "localhost:8080", "address to listen on (port 0: any free port; the log says which)")
	data := fs.String("data", "", "data directory of the embedded store (required; created if missing)")
	host, _ := os.Hostname()
	actor := fs.String("actor", host, "actor this service writes as (default: the host name)")
	retireAfter := fs.Duration("retire-after", 0, "retire other actors' entries idle this long (ledger.Options.RetireAfter; 0: ledger.DefaultRetireAfter, 1h; negative: never); retiring narrows no retry window")
	maxOpen := fs.Int("max-open", 0, "ledgers the Book keeps decoded (0: ledger.DefaultMaxOpen)")
	landEvery := fs.Duration("land-every", time.Second, "how often to land writes left pending by ambiguous store errors (0: only on the account's next request and at shutdown)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 10*time.Second, "how long requests in flight may run after a shutdown signal")
	expireEvery := fs.Duration("expire-every", time.Hour, "how often to delete transaction records past every retry window (ledger.ExpireAllRecords; 0: never, and the store keeps a key per transaction for good)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(logw, "unexpected arguments: %q\n", fs.Args())
		return errUsage
	}
	if *data == "" {
		fmt.Fprintln(logw, "-data DIR is required: the directory of the embedded store holding the balances")
		fs.Usage()
		return errUsage
	}
	actorID, err := crdt.NewActorID(*actor)
	if err != nil {
		fmt.Fprintf(logw, "-actor: %v\n", err)
		return errUsage
	}
	if *landEvery < 0 || *expireEvery < 0 {
		fmt.Fprintln(logw, "-land-every and -expire-every must not be negative (0: never)")
		return errUsage
	}
	cfg := config{Actor: actorID, RetireAfter: *retireAfter, MaxOpen: *maxOpen, LandEvery: *landEvery}
	// The ledger's own checks (an actor too long for a writer id, a
	// negative -max-open) refuse the flags before the store is opened.
	if _, err := ledger.NewBook(memory.NewSiblings(), cfg.bookOptions()); err != nil {
		fmt.Fprintf(logw, "invalid flags: %v\n", err)
		return errUsage
	}
	log := slog.New(slog.NewTextHandler(logw, nil))

	db, err := embedded.Open(*data, embedded.Options{})
	if err != nil {
		return err
	}
	svc, err := newService(db.Siblings(), cfg, log)
	if err != nil {
		return errors.Join(err, db.Close())
	}
	// A consistent copy of the store while the service runs, for
	// `counterkit backup -from http://ADDR/admin/backup -to DIR`. Serve
	// /admin/ only to operators (an admin listener or network) in
	// production.
	svc.mux.Handle("GET /admin/backup", db.BackupHandler())
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return errors.Join(err, svc.Close(), db.Close())
	}
	log.Info("listening", "addr", ln.Addr().String(), "data", *data, "actor", string(actorID))
	ectx, stopExpiring := context.WithCancel(ctx)
	expired := make(chan struct{})
	if *expireEvery > 0 {
		go expireLoop(ectx, db.Siblings(), *expireEvery, log, expired)
	} else {
		close(expired)
	}
	err = svc.Serve(ctx, stop, ln, *shutdownTimeout)
	stopExpiring()
	<-expired // before the store closes
	err = errors.Join(err, svc.Close())
	if cerr := db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close the store: %w", cerr))
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}

// expireLoop deletes, every interval until ctx is done, the transaction
// records no retry window can need any more (the embedded store has no
// TTL), then closes done.
func expireLoop(ctx context.Context, st *embedded.Siblings, every time.Duration, log *slog.Logger, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		res, err := ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{})
		if err != nil && ctx.Err() == nil {
			log.Warn("expiring transaction records", "err", err)
		}
		log.Info("transaction records expired", "deleted", res.Deleted, "kept", res.Kept, "dating", res.Dating, "damaged", res.Damaged)
	}
}
