package cassandra

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// tokenTag is the envelope tag of a Siblings token. It is local to this
// adapter (a token goes from a Fetch to a Put of the same backend and is
// never stored), so it is not registered in package crdt. The tag keeps the
// name it had when the ledger was the token's only user, so that the
// encoding is unchanged.
const tokenTag = "cassandra.ledger_token"

// TokenFormatVersion is the token format written by Siblings.Fetch.
//
// Layout (msgpack, inside counterkit's envelope [tag, version, body],
// followed by the 8 bytes that bind it to its table and key: bindingLen):
//
//	body: [ [actor: str, writetime: uint]... ]   sorted by actor, strictly ascending
//
// One entry per row the Fetch returned: the row's actor and the WRITETIME
// (µs, ≥ 1) of its value. Every header and integer takes its smallest
// msgpack form, so an encoding is canonical. Decoding caps: at most
// MaxSiblings entries, actor ids as crdt.ActorID.Validate allows, and at
// most MaxTokenSize bytes.
const TokenFormatVersion = 1

// MaxTokenSize bounds an encoded token: MaxSiblings entries of the longest
// actor id and timestamp, plus the envelope.
const MaxTokenSize = 64 + MaxSiblings*(crdt.MaxIDLen+16) + bindingLen

// bindingLen is the length of the binding a Fetch appends to a token's
// encoding: the FNV-64a hash of the siblings table's quoted name, a zero
// byte and the key, big-endian. Put refuses a token whose binding is not
// its own table's and key's: the rows a token names are (actor, write
// time) pairs, which a Put of another key or table would delete there.
const bindingLen = 8

// binding is the binding of tokens of key in table.
func binding(table, key string) [bindingLen]byte {
	h := fnv.New64a()
	h.Write([]byte(table))
	h.Write([]byte{0})
	h.Write([]byte(key))
	var b [bindingLen]byte
	binary.BigEndian.PutUint64(b[:], h.Sum64())
	return b
}

// seal appends the binding of key in table to an encoded token.
func seal(tok []byte, table, key string) []byte {
	b := binding(table, key)
	return append(tok, b[:]...)
}

// unseal returns the encoding of a token sealed for key in table: nil for
// an empty token, an error wrapping crdt.ErrCorruptEncoding for one too
// short or sealed for another table or key.
func unseal(tok []byte, table, key string) ([]byte, error) {
	if len(tok) == 0 {
		return nil, nil
	}
	if len(tok) <= bindingLen {
		return nil, fmt.Errorf("%w: token of %d bytes", crdt.ErrCorruptEncoding, len(tok))
	}
	at := len(tok) - bindingLen
	if b := binding(table, key); !bytes.Equal(tok[at:], b[:]) {
		return nil, fmt.Errorf("%w: the token is from a Fetch of another key or table", crdt.ErrCorruptEncoding)
	}
	return tok[:at], nil
}

// maxWriteTime is the latest WRITETIME a sibling row may carry, the start
// of the year 10000 in µs: Fetch refuses a row written later, and a token
// naming one, as corrupt (no writer's clock is there), so that no foreign
// row can lift the DB's clock to the end of the range, where two writes
// would tie.
var maxWriteTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

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
	if len(entries) > MaxSiblings {
		return nil, fmt.Errorf("%w: token of %d rows, limit %d", crdt.ErrTooLarge, len(entries), MaxSiblings)
	}
	sorted := append([]tokenEntry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].actor < sorted[j].actor })
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
	}
	e := wire.NewEncoder(tokenTag, TokenFormatVersion)
	e.ArrayLen(len(sorted))
	for _, t := range sorted {
		e.ArrayLen(2)
		e.String(string(t.actor))
		e.Uint(uint64(t.ts))
	}
	return e.Bytes()
}

// decodeToken accepts an empty token (no Fetch, or an absent key) as no
// entries. Every error wraps crdt.ErrCorruptEncoding (a token this store
// did not make is malformed, as store.Siblings says), and also
// crdt.ErrTooLarge, crdt.ErrTypeMismatch or crdt.ErrUnsupportedVersion
// when that is what is wrong with it.
func decodeToken(b []byte) (_ []tokenEntry, err error) {
	defer func() {
		if err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
			err = fmt.Errorf("%w: %w", crdt.ErrCorruptEncoding, err)
		}
	}()
	if len(b) == 0 {
		return nil, nil
	}
	d, _, err := wire.NewDecoder(b, tokenTag, TokenFormatVersion, MaxTokenSize)
	if err != nil {
		return nil, err
	}
	n, err := d.ArrayLen(MaxSiblings)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: token with no rows (an absent key has a nil token)", crdt.ErrCorruptEncoding)
	}
	out := make([]tokenEntry, 0, n)
	for i := 0; i < n; i++ {
		if err := d.Tuple(2, "token row"); err != nil {
			return nil, err
		}
		a, err := d.Actor()
		if err != nil {
			return nil, err
		}
		ts, err := d.Uint()
		if err != nil {
			return nil, err
		}
		if ts < 1 || ts > uint64(maxWriteTime) {
			return nil, fmt.Errorf("%w: token: write timestamp %d of actor %q", crdt.ErrCorruptEncoding, ts, a)
		}
		if i > 0 && out[i-1].actor >= a {
			return nil, fmt.Errorf("%w: token: actors not strictly ascending at %q", crdt.ErrCorruptEncoding, a)
		}
		out = append(out, tokenEntry{actor: a, ts: int64(ts)})
	}
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return out, nil
}
