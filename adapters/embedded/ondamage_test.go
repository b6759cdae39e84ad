package embedded

import (
	"errors"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// TestOnDamage: a panic under onDamage becomes an error wrapping
// crdt.ErrCorruptEncoding and the extra errors, with the path and the panic
// in its text; without a panic the function's own error stands.
func TestOnDamage(t *testing.T) {
	run := func(panics bool, also ...error) (err error) {
		defer onDamage("/d/f", &err, also...)()
		if panics {
			panic("bad page")
		}
		return errTaken
	}
	err := run(true, errPanicked)
	if !errors.Is(err, crdt.ErrCorruptEncoding) || !errors.Is(err, errPanicked) ||
		err.Error() != "embedded: /d/f is damaged (bad page): "+crdt.ErrCorruptEncoding.Error()+": the engine panicked" {
		t.Errorf("a panic under onDamage: %v", err)
	}
	if err := run(true); !errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, errPanicked) {
		t.Errorf("a panic under onDamage without extra errors: %v", err)
	}
	if err := run(false, errPanicked); err != errTaken {
		t.Errorf("no panic under onDamage: %v, want the function's error", err)
	}
}
