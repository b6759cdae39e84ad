package crdt_test

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/crdt/crdttest"
	"github.com/counterkit/counterkit/proptest"
)

func TestIDValidation(t *testing.T) {
	cases := []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"server-1", true},
		{"über/ä", true},
		{"日本", true},
		{strings.Repeat("x", crdt.MaxIDLen), true},
		{strings.Repeat("é", crdt.MaxIDLen/2), true}, // 254 bytes
		{"", false},
		{strings.Repeat("x", crdt.MaxIDLen+1), false},
		{"tab\there", false},
		{"nul\x00", false},
		{"del\x7f", false},
		{"c1\u0085", false}, // a C1 control character
		{"\xc3\x28", false}, // invalid UTF-8
		{"ok\xff", false},
	}
	for _, c := range cases {
		_, errA := crdt.NewActorID(c.id)
		_, errT := crdt.NewTxnID(c.id)
		if c.ok {
			if errA != nil || errT != nil {
				t.Errorf("%q: unexpected errors %v, %v", c.id, errA, errT)
			}
			continue
		}
		if !errors.Is(errA, crdt.ErrInvalidActor) || !errors.Is(errT, crdt.ErrInvalidTxnID) {
			t.Errorf("%q: got %v, %v; want ErrInvalidActor and ErrInvalidTxnID", c.id, errA, errT)
		}
	}
}

// TestIDValidationMatchesModel compares the validator (with its ASCII fast
// path) against the plain rule on random byte strings biased towards
// boundaries: control bytes, multi-byte runes, invalid sequences, lengths
// around MaxIDLen.
func TestIDValidationMatchesModel(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d (replay: COUNTERKIT_SEED=%d go test ./crdt -run '^TestIDValidationMatchesModel$')", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	alphabet := []string{"a", "Z", "-", " ", "\x00", "\x1f", "\x7f", "é", "\u0085", "日", "\xff", "\xc3", "\U0001F600"}
	model := func(s string) bool {
		if s == "" || len(s) > crdt.MaxIDLen || !utf8.ValidString(s) {
			return false
		}
		for _, r := range s {
			if unicode.IsControl(r) {
				return false
			}
		}
		return true
	}
	for i := 0; i < proptest.Scale(20000); i++ {
		var b strings.Builder
		n := rng.Intn(8)
		if rng.Intn(4) == 0 {
			n = crdt.MaxIDLen - 4 + rng.Intn(8)
		}
		for b.Len() < n {
			if rng.Intn(3) == 0 {
				b.WriteString(alphabet[rng.Intn(len(alphabet))])
			} else {
				b.WriteByte(byte('a' + rng.Intn(26)))
			}
		}
		s := b.String()
		if got, want := crdt.ActorID(s).Validate() == nil, model(s); got != want {
			t.Fatalf("%q: valid=%v, model says %v (seed %d)", s, got, want, seed)
		}
	}
}

func TestCheckIDMatchesValidate(t *testing.T) {
	for _, s := range []string{"a", "", "a\x00", "\xff", strings.Repeat("x", crdt.MaxIDLen+1), "Zoë"} {
		reason := crdt.CheckID(s)
		err := crdt.ActorID(s).Validate()
		if (reason == "") != (err == nil) {
			t.Fatalf("%q: CheckID %q, Validate %v", s, reason, err)
		}
		if err != nil && !strings.Contains(err.Error(), reason) {
			t.Fatalf("%q: Validate %q does not give the reason %q", s, err, reason)
		}
	}
}

func TestValidateKey(t *testing.T) {
	for name, bad := range crdttest.InvalidKeys() {
		err := crdt.ValidateKey("ledger key", bad)
		if !errors.Is(err, crdt.ErrInvalidKey) || !errors.Is(err, crdt.ErrInvalidIdentifier) {
			t.Errorf("%s: ValidateKey(%q) = %v, want ErrInvalidKey wrapping ErrInvalidIdentifier", name, bad, err)
		}
	}
	for name, good := range crdttest.ValidKeys() {
		if err := crdt.ValidateKey("ledger key", good); err != nil {
			t.Errorf("%s: ValidateKey(%q) = %v, want nil", name, good, err)
		}
	}
}
