// Package storekit is the logic of package store's shapes that the
// backends and the store test kits share.
package storekit

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// CheckKey returns ctx's error, or the error of crdt.ValidateKey(what,
// key): what a read or a delete checks before it touches the store.
func CheckKey(ctx context.Context, what, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return crdt.ValidateKey(what, key)
}

// Covers reports whether range delete a contains range delete b.
func Covers(a, b store.Mutation) bool {
	if string(b.Key) < string(a.Key) {
		return false
	}
	return a.End == nil || (b.End != nil && string(b.End) <= string(a.End))
}

// CloneRow returns a copy of r sharing no memory with it.
func CloneRow(r store.Row) store.Row {
	return store.Row{Key: slices.Clone(r.Key), Value: slices.Clone(r.Value)}
}

// CloneRows returns a copy of rows sharing no memory with it.
func CloneRows(rows []store.Row) []store.Row {
	out := make([]store.Row, len(rows))
	for i, r := range rows {
		out[i] = CloneRow(r)
	}
	return out
}

// SameRows reports whether a and b hold the same keys and values in the
// same order.
func SameRows(a, b []store.Row) bool {
	return slices.EqualFunc(a, b, func(x, y store.Row) bool {
		return bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value)
	})
}

// CloneMutation returns a copy of m sharing no memory with it.
func CloneMutation(m store.Mutation) store.Mutation {
	m.Key, m.End, m.Value = slices.Clone(m.Key), slices.Clone(m.End), slices.Clone(m.Value)
	return m
}

// CloneBatch returns a copy of b sharing no memory with it (nil for nil).
func CloneBatch(b []store.Mutation) []store.Mutation {
	out := slices.Clone(b)
	for i, m := range out {
		out[i] = CloneMutation(m)
	}
	return out
}

// PartitionsOf returns the partitions muts addresses, in order of first
// appearance.
func PartitionsOf(muts []store.Mutation) []string {
	var parts []string
	for _, m := range muts {
		if !slices.Contains(parts, m.Partition) {
			parts = append(parts, m.Partition)
		}
	}
	return parts
}

// FirstPage bounds the first page of a scan over the network: most scans
// stop within a few rows (a lookup by key, the newest cells of a log), so
// the first page is small and the pages after it full.
const FirstPage = 8

// LocalFirstPage is the first page of a scan of an in-process store, where
// a page costs no round trip: a lookup by key reads its row and the one
// after it.
const LocalFirstPage = 2

// ScanPages is Partitions.Scan over a store that reads a page at a time:
// read returns up to n rows from the row key from on (the first page at
// most first), and ScanPages calls fn with them until fn returns false or
// a page comes back short.
func ScanPages(from []byte, first, n int, read func(from []byte, n int) ([]store.Row, error), fn func(store.Row) bool) error {
	next := slices.Clone(from)
	for page := min(n, first); ; page = n {
		rows, err := read(next, page)
		if err != nil || len(rows) == 0 {
			return err
		}
		// fn owns the rows it is given and may change them.
		last := slices.Clone(rows[len(rows)-1].Key)
		for _, r := range rows {
			if !fn(r) {
				return nil
			}
		}
		if len(rows) < page {
			return nil
		}
		next = append(last, 0)
	}
}

// ReadLimit is how many rows a Snapshot of limit reads: limit+1, or
// math.MaxInt for math.MaxInt. A negative limit wraps
// crdt.ErrInvalidConfig.
func ReadLimit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, fmt.Errorf("%w: snapshot limit %d", crdt.ErrInvalidConfig, limit)
	case limit == math.MaxInt:
		return limit, nil
	}
	return limit + 1, nil
}

// Limit returns rows, read with a limit of ReadLimit(limit), or an error wrapping
// crdt.ErrTooLarge when they are more than limit; name prefixes the error.
func Limit(name, partition string, limit int, rows []store.Row, err error) ([]store.Row, error) {
	if err != nil {
		return nil, err
	}
	if len(rows) > limit {
		return nil, fmt.Errorf("%s: partition %q has more than %d rows: %w", name, partition, limit, crdt.ErrTooLarge)
	}
	return rows, nil
}

// Nil reports whether st, a store passed to a constructor, is nil: a nil
// interface, or one holding a nil pointer, map, slice, func or chan (a
// store declared and left unset), whose methods would panic at the first
// call rather than at the constructor, which refuses it.
func Nil(st any) bool {
	v := reflect.ValueOf(st)
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}
