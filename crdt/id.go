package crdt

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIDLen is the largest ActorID or TxnID, in bytes. Ids are stored in every
// state that mentions them, so the bound keeps states small and decoders safe.
const MaxIDLen = 255

// ActorID names a replica, process or mutator that updates a counter. An
// actor must apply its own updates serially; concurrency comes from having
// several actors. Valid ids are 1..MaxIDLen bytes of UTF-8 with no control
// characters.
//
// Actor ids should be stable across restarts of the same logical actor: a
// fresh id per process start makes states grow forever (see the package
// documentation on actor explosion).
type ActorID string

// NewActorID validates s and returns it as an ActorID.
func NewActorID(s string) (ActorID, error) { return valid(ActorID(s)) }

// Validate reports whether a is a valid actor id. The error wraps
// ErrInvalidActor.
func (a ActorID) Validate() error { return invalid(ErrInvalidActor, "", string(a)) }

// String returns the id.
func (a ActorID) String() string { return string(a) }

// TxnID is a client-chosen, globally unique transaction id. Retrying an
// operation with the same TxnID is what makes it idempotent. Valid ids follow
// the same rules as ActorID.
type TxnID string

// NewTxnID validates s and returns it as a TxnID.
func NewTxnID(s string) (TxnID, error) { return valid(TxnID(s)) }

// Validate reports whether t is a valid transaction id. The error wraps
// ErrInvalidTxnID.
func (t TxnID) Validate() error { return invalid(ErrInvalidTxnID, "", string(t)) }

// String returns the id.
func (t TxnID) String() string { return string(t) }

// valid returns id, or the error of its Validate.
func valid[T interface {
	~string
	Validate() error
}](id T) (T, error) {
	if err := id.Validate(); err != nil {
		return "", err
	}
	return id, nil
}

// CheckID returns why s breaks the rules ActorID and TxnID share (empty,
// longer than MaxIDLen bytes, not UTF-8, a control character), or "" when
// it follows them. Packages that apply the same rules to their own keys use
// it to report the reason under their own sentinel error.
func CheckID(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > MaxIDLen:
		return fmt.Sprintf("is %d bytes, longer than %d", len(s), MaxIDLen)
	}
	for i := 0; i < len(s); i++ { // ASCII bytes, then the rest as runes
		switch c := s[i]; {
		case c >= utf8.RuneSelf && !utf8.ValidString(s[i:]):
			return "is not valid UTF-8"
		case c >= utf8.RuneSelf && strings.IndexFunc(s[i:], unicode.IsControl) >= 0, c < 0x20, c == 0x7f:
			return "contains a control character"
		case c >= utf8.RuneSelf:
			return ""
		}
	}
	return ""
}

// MaxKeyLen is the longest storage key (a ledger, tally, counter or account
// key), in bytes.
const MaxKeyLen = 255

// ValidateKey checks a storage key the way every driver and adapter does: it
// must be 1..MaxKeyLen bytes of valid UTF-8 with no control character (NUL
// included). kind names the key in the message ("ledger key", "account
// key"). The error wraps ErrInvalidKey.
func ValidateKey(kind, key string) error { return invalid(ErrInvalidKey, kind, key) }

// invalid returns an error wrapping sentinel that names s (its first 40
// bytes, after kind if any) and how it breaks CheckID's rules, or nil.
func invalid(sentinel error, kind, s string) error {
	reason := CheckID(s)
	if reason == "" {
		return nil
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	if kind != "" {
		kind += " "
	}
	return fmt.Errorf("%w: %s%q %s", sentinel, kind, s, reason)
}
