package cassandra

import (
	"fmt"
	"sort"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// tokenTag is the envelope tag of a ledger token. It is local to this
// adapter (a token never leaves the process that fetched it for another
// backend), so it is not registered in package crdt.
const tokenTag crdt.TypeTag = "cassandra.ledger_token"

// TokenFormatVersion is the ledger token format written by Fetch.
//
// Layout (msgpack, inside the crdt envelope [tag, version, body]):
//
//	body: [ [actor: str, writetime: uint]... ]   sorted by actor, strictly ascending
//
// One entry per row the Fetch returned: the row's actor and the
// WRITETIME (µs, ≥ 1) of its value. Decoding caps: at most
// MaxActorRows entries, actor ids as crdt.ActorID.Validate allows, and
// at most MaxTokenSize bytes.
const TokenFormatVersion = 1

// MaxTokenSize bounds an encoded ledger token: MaxActorRows entries of the
// longest actor id and timestamp, plus the envelope.
const MaxTokenSize = 64 + MaxActorRows*(crdt.MaxIDLen+16)

// tokenEntry names one row version a Fetch saw.
type tokenEntry struct {
	actor crdt.ActorID
	ts    int64
}

// encodeToken returns the token for the given rows (any order), or nil
// when there are none: a Put with a nil token supersedes nothing.
func encodeToken(entries []tokenEntry) ([]byte, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	sorted := append([]tokenEntry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].actor < sorted[j].actor })
	if len(sorted) > MaxActorRows {
		return nil, fmt.Errorf("%w: token of %d rows, limit %d", crdt.ErrTooLarge, len(sorted), MaxActorRows)
	}
	e := wire.NewEncoder(tokenTag, TokenFormatVersion)
	e.ArrayLen(len(sorted))
	for i, t := range sorted {
		if err := t.actor.Validate(); err != nil {
			return nil, err
		}
		if i > 0 && sorted[i-1].actor == t.actor {
			return nil, fmt.Errorf("%w: actor %q twice in a token", crdt.ErrCorruptEncoding, t.actor)
		}
		if t.ts < 1 {
			return nil, fmt.Errorf("%w: write timestamp %d of actor %q", crdt.ErrCorruptEncoding, t.ts, t.actor)
		}
		e.ArrayLen(2)
		e.String(string(t.actor))
		e.Int(t.ts)
	}
	return e.Bytes()
}

// decodeToken accepts an empty token (no Fetch, or an absent key) as no
// entries. Errors wrap crdt.ErrCorruptEncoding, crdt.ErrTooLarge,
// crdt.ErrTypeMismatch or crdt.ErrUnsupportedVersion.
func decodeToken(b []byte) ([]tokenEntry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d, _, err := wire.NewDecoder(b, tokenTag, TokenFormatVersion, MaxTokenSize)
	if err != nil {
		return nil, fmt.Errorf("ledger token: %w", err)
	}
	n, err := d.ArrayLen(MaxActorRows)
	if err != nil {
		return nil, fmt.Errorf("ledger token: %w", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: ledger token with no rows (an absent key has a nil token)", crdt.ErrCorruptEncoding)
	}
	out := make([]tokenEntry, 0, n)
	for i := 0; i < n; i++ {
		l, err := d.ArrayLen(2)
		if err != nil {
			return nil, fmt.Errorf("ledger token: %w", err)
		}
		if l != 2 {
			return nil, fmt.Errorf("%w: ledger token entry of %d elements, want 2", crdt.ErrCorruptEncoding, l)
		}
		a, err := d.Actor()
		if err != nil {
			return nil, fmt.Errorf("ledger token: %w", err)
		}
		ts, err := d.NonNegInt()
		if err != nil {
			return nil, fmt.Errorf("ledger token: %w", err)
		}
		if ts < 1 {
			return nil, fmt.Errorf("%w: ledger token: write timestamp %d of actor %q", crdt.ErrCorruptEncoding, ts, a)
		}
		if i > 0 && out[i-1].actor >= a {
			return nil, fmt.Errorf("%w: ledger token: actors not strictly ascending at %q", crdt.ErrCorruptEncoding, a)
		}
		out = append(out, tokenEntry{actor: a, ts: ts})
	}
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("ledger token: %w", err)
	}
	return out, nil
}
