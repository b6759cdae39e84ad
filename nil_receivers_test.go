package counterkit_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestNilReceivers calls every exported method of the state types on a nil
// pointer, with zero arguments, ranging any iterator it returns: the
// read-only ones answer as the empty state does and only the methods that
// change the receiver (listed here) panic (crdt.State). A new method that
// panics on nil fails this test until it is made to answer, or listed as
// a mutator.
func TestNilReceivers(t *testing.T) {
	mutators := map[string][]string{
		"*gcounter.Counter":    {"Grow", "Handle", "Increment"},
		"*pncounter.Counter":   {"Apply", "Decrement", "Grow", "Handle", "Increment"},
		"*tpncounter.Counter":  {"Fold", "Merge", "MergeBinary", "Retire", "RetireAll", "RetireAllAt", "RetireLateAt", "UnmarshalBinary"},
		"*tpncounter.GCounter": {"Fold", "Retire", "UnmarshalBinary"},
	}
	for _, v := range []any{(*gcounter.Counter)(nil), (*pncounter.Counter)(nil), (*tpncounter.Counter)(nil), (*tpncounter.GCounter)(nil)} {
		rv := reflect.ValueOf(v)
		typ := fmt.Sprintf("%T", v)
		var panicked []string
		for i := range rv.NumMethod() {
			m := rv.Type().Method(i)
			args := []reflect.Value{rv}
			for j := 1; j < m.Type.NumIn(); j++ {
				args = append(args, reflect.Zero(m.Type.In(j)))
			}
			func() {
				defer func() {
					if recover() != nil {
						panicked = append(panicked, m.Name)
					}
				}()
				for _, out := range m.Func.Call(args) {
					if out.Kind() == reflect.Func && out.Type().NumIn() == 1 && !out.IsNil() { // an iterator
						yield := reflect.MakeFunc(out.Type().In(0), func([]reflect.Value) []reflect.Value {
							return []reflect.Value{reflect.ValueOf(true)}
						})
						out.Call([]reflect.Value{yield})
					}
				}
			}()
		}
		if !slices.Equal(panicked, mutators[typ]) {
			t.Errorf("%s: methods that panic on a nil receiver %v, want only the mutators %v", typ, panicked, mutators[typ])
		}
	}
}
