package ledger

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/txnrec"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// SeenKeyPrefix starts the key of a ledger key's stored sightings (SPEC.md
// 6.9), which it keeps in the accounts' store beside the key: when a pass
// finds a writer that no record dates, it notes there the writer's
// version and the time it first saw it, so that a ledger of a later
// process dates the writer from then, as the first one would have. No
// ledger, Book or Sharded account may use a key in this space.
const SeenKeyPrefix = "counterkit.seen/"

// IsSeenKey reports whether key is a key of stored sightings (starts with
// SeenKeyPrefix): what a tool listing a store's keys tells apart.
func IsSeenKey(key string) bool { return strings.HasPrefix(key, SeenKeyPrefix) }

// maxSeen bounds the sightings a decoder takes: as many as the most live
// actors a counter may hold. A ledger keeps at most its counter's
// MaxActors, those first seen earliest, so that every live writer of a
// full account has room for its sighting.
const maxSeen = tpncounter.MaxActorsLimit

// SeenKey returns the key of key's stored sightings: SeenKeyPrefix and
// the base32 (extended hex, no padding) of the first 20 bytes of
// SHA-256(key), 48 bytes.
func SeenKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return SeenKeyPrefix + seenEncoding.EncodeToString(sum[:20])
}

var seenEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// A Sighting is a stored sighting: Writer had a live entry at Version,
// which no record dated, in a state read at At.
type Sighting struct {
	Writer  crdt.ActorID
	Version uint64
	At      time.Time
}

// Sightings is the value stored under a SeenKey (tag "ledger.seen"):
// what a tool that inspects a store decodes.
type Sightings []Sighting

// MarshalBinary encodes s, sorted (SPEC.md 6.9); it refuses more than
// 65,536 sightings or 16 MiB, and any sighting no ledger makes (errors
// wrap crdt.ErrTooLarge, crdt.ErrInvalidAmount or crdt.ErrInvalidActor).
func (s Sightings) MarshalBinary() ([]byte, error) { return encodeSightings(s) }

// UnmarshalBinary decodes what MarshalBinary encodes and refuses any other
// bytes (errors wrap crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch,
// crdt.ErrUnsupportedVersion or crdt.ErrTooLarge), leaving s unchanged.
func (s *Sightings) UnmarshalBinary(b []byte) error {
	x, err := decodeSightings(b)
	if err != nil {
		return err
	}
	*s = x
	return nil
}

// maxSeenEncoded bounds an encoding of sightings: that of any value (a
// full set with the longest writer ids would be longer: a ledger keeps
// the earliest that fit, earliestSightings).
const maxSeenEncoded = crdt.DefaultMaxEncodedSize

// encodeSightings encodes sightings (SPEC.md 6.9): the envelope
// "ledger.seen", version 1, and an array of [writer, version, at in Unix
// nanoseconds], sorted by writer, then version. It refuses more than
// maxSeen, more than maxSeenEncoded bytes and a sighting no ledger makes.
func encodeSightings(sightings []Sighting) ([]byte, error) {
	s := slices.SortedFunc(slices.Values(sightings), compareSightings)
	if err := checkSightings(s); err != nil {
		return nil, err
	}
	e := wire.NewEncoder(crdt.TagLedgerSeen, 1)
	e.ArrayLen(len(s))
	for _, x := range s {
		e.ArrayLen(3)
		e.String(string(x.Writer))
		e.Uint(x.Version)
		e.Int(x.At.UnixNano())
	}
	b, err := e.Bytes()
	if err == nil && len(b) > maxSeenEncoded {
		return nil, fmt.Errorf("%w: %d sightings encode to %d bytes, above %d", crdt.ErrTooLarge, len(s), len(b), maxSeenEncoded)
	}
	return b, err
}

// decodeSightings decodes encodeSightings' bytes, refusing any other
// (errors wrap crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch,
// crdt.ErrUnsupportedVersion or crdt.ErrTooLarge).
func decodeSightings(b []byte) ([]Sighting, error) {
	d, _, err := wire.NewDecoder(b, crdt.TagLedgerSeen, 1, maxSeenEncoded)
	if err != nil {
		return nil, err
	}
	n, err := d.ArrayLen(maxSeen)
	if err != nil {
		return nil, err
	}
	out := make([]Sighting, 0, min(n, len(b)/5)) // a sighting takes 5 bytes or more
	for range n {
		var x Sighting
		var at int64
		if err := d.Tuple(3, "sighting"); err != nil {
			return nil, err
		}
		if x.Writer, err = d.Actor(); err != nil {
			return nil, err
		}
		if x.Version, err = d.Uint(); err != nil {
			return nil, err
		}
		if at, err = d.Int(); err != nil {
			return nil, err
		}
		x.At = time.Unix(0, at).UTC()
		out = append(out, x)
	}
	if err := d.Finish(); err != nil {
		return nil, err
	}
	if err := checkSightings(out); err != nil {
		return nil, fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
	}
	return out, nil
}

func compareSightings(a, b Sighting) int {
	return cmp.Or(strings.Compare(string(a.Writer), string(b.Writer)), cmp.Compare(a.Version, b.Version))
}

// checkSightings refuses more than maxSeen sightings, any out of order or
// repeated, and one no ledger makes: version 0 or above
// txnrec.MaxVersion, a time not after 1970 or past 2262-04-11.
func checkSightings(s []Sighting) error {
	if len(s) > maxSeen {
		return fmt.Errorf("%w: %d sightings, above %d", crdt.ErrTooLarge, len(s), maxSeen)
	}
	for i, x := range s {
		if err := x.Writer.Validate(); err != nil {
			return err
		}
		if x.Version == 0 || x.Version > txnrec.MaxVersion {
			return fmt.Errorf("%w: sighting of %q at version %d", crdt.ErrInvalidAmount, x.Writer, x.Version)
		}
		if !txnrec.EncodableTime(x.At) {
			return fmt.Errorf("%w: sighting of %q at %v, not after 1970 and before 2262", crdt.ErrInvalidAmount, x.Writer, x.At)
		}
		if i > 0 && compareSightings(s[i-1], x) >= 0 {
			return fmt.Errorf("%w: sightings out of order or repeated at %q", crdt.ErrInvalidAmount, x.Writer)
		}
	}
	return nil
}

// storedSightings is what one pass read of its key's stored sightings and
// what it adds: fetched once, before a pass that first sees a writer.
type storedSightings struct {
	ok    bool
	token store.Token
	at    map[Sighting]time.Time // by writer and version (At zero): the earliest
	add   []Sighting
}

// keepEarliest records x in first, keyed by its writer and version, unless
// first holds an earlier time for them.
func keepEarliest(first map[Sighting]time.Time, x Sighting) {
	k := Sighting{Writer: x.Writer, Version: x.Version}
	if at, ok := first[k]; !ok || x.At.Before(at) {
		first[k] = x.At
	}
}

// fetch reads key's stored sightings. A failed fetch leaves none (every
// writer dated from now, as without them) and no Put; a sibling that does
// not decode is passed over: it dates no one, and the next Put replaces
// it.
func (s *storedSightings) fetch(ctx context.Context, l *Ledger) {
	sibs, token, err := l.store.Fetch(ctx, SeenKey(l.key))
	if err != nil {
		return
	}
	s.ok, s.token, s.at = true, token, map[Sighting]time.Time{}
	for _, b := range sibs {
		seen, err := decodeSightings(b)
		if err != nil {
			continue
		}
		for _, x := range seen {
			keepEarliest(s.at, x)
		}
	}
}

// dating returns when a stored sighting first saw a at version v: found
// is false for none (or none read) and for a time after now (another
// clock ahead).
func (s *storedSightings) dating(a crdt.ActorID, v uint64, now time.Time) (at time.Time, found bool) {
	at, found = s.at[Sighting{Writer: a, Version: v}]
	if brokenSeenAnyVersion {
		for k, t := range s.at {
			if k.Writer == a && (!found || t.Before(at)) {
				at, found = t, true
			}
		}
	}
	if !found || at.After(now) {
		return time.Time{}, false
	}
	return at, true
}

// put writes the sightings read and those added, but those of writers no
// longer live at that version in merged (a version above it is kept: the
// read lags), with the token of the fetch; a failure is left alone, since
// later ledgers then date the writers later, not earlier.
func (s *storedSightings) put(ctx context.Context, l *Ledger, merged *tpncounter.Counter) {
	if !s.ok || len(s.add) == 0 {
		return
	}
	live := maps.Collect(merged.LiveActors())
	first := map[Sighting]time.Time{}
	for k, at := range s.at {
		if v, ok := live[k.Writer]; ok && k.Version >= v {
			first[k] = at
		}
	}
	for _, x := range s.add {
		keepEarliest(first, x)
	}
	all := make([]Sighting, 0, len(first))
	for k, at := range first {
		all = append(all, Sighting{Writer: k.Writer, Version: k.Version, At: at})
	}
	n := merged.Options().MaxActors
	if brokenSeenCapped {
		n = min(n, 256)
	}
	b, err := encodeSightings(earliestSightings(all, n))
	if err != nil {
		return
	}
	_ = l.store.Put(ctx, SeenKey(l.key), l.writer, b, s.token)
}

// earliestSightings returns the sightings of s first seen earliest (ties
// by writer, then version), at most n and as many as encode in
// store.MaxValue, the largest value every store takes (the format's own
// limit, maxSeenEncoded, is above it): s itself when all of them do.
func earliestSightings(s []Sighting, n int) []Sighting {
	// At most 22 bytes besides a writer's id: a 3-element array header,
	// the id's string header (2) and two integers of 9 bytes each; the
	// envelope and the outer array's header take less than 64.
	size := func(x Sighting) int { return len(x.Writer) + 22 }
	budget := store.MaxValue - 64
	total := 0
	for _, x := range s {
		total += size(x)
	}
	if len(s) <= n && total <= budget {
		return s
	}
	slices.SortFunc(s, func(a, b Sighting) int { return cmp.Or(a.At.Compare(b.At), compareSightings(a, b)) })
	total = 0
	for i, x := range s {
		if total += size(x); i == n || total > budget {
			return s[:i]
		}
	}
	return s
}
