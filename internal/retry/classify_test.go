package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Put
	}{
		{nil, Landed},
		{fmt.Errorf("x: %w", crdt.ErrAmbiguousWrite), Ambiguous},
		{fmt.Errorf("x: %w", crdt.ErrUnavailable), Refused},
		{fmt.Errorf("%w and %w", crdt.ErrUnavailable, crdt.ErrAmbiguousWrite), Ambiguous},
		{crdt.ErrTooLarge, Invalid},
		{crdt.ErrInvalidKey, Invalid},
		{crdt.ErrCorruptEncoding, Invalid},
		{context.Canceled, Ambiguous},
		{errors.New("unclassified"), Ambiguous},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestInDoubt(t *testing.T) {
	err := InDoubt(context.Canceled, "an earlier write")
	if !errors.Is(err, crdt.ErrAmbiguousWrite) || !errors.Is(err, context.Canceled) {
		t.Fatalf("InDoubt: %v", err)
	}
	amb := fmt.Errorf("put: %w", crdt.ErrAmbiguousWrite)
	if InDoubt(amb, "x") != amb || AmbiguousErr(amb) != amb {
		t.Fatal("an ambiguous error is returned unchanged")
	}
	if !errors.Is(AmbiguousErr(errors.New("odd")), crdt.ErrAmbiguousWrite) {
		t.Fatal("AmbiguousErr wraps")
	}
}
