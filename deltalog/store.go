package deltalog

import "context"

// Entry is one cell addressed to one counter (a store partition).
type Entry struct {
	Counter string
	Cell    Cell
}

// Store is what Counters needs from a database. It is shaped after one
// Cassandra table
//
//	CREATE TABLE counter_log (
//	    counter text,
//	    id      timeuuid,
//	    kind    tinyint,   -- 'm' (109) or 'r' (114)
//	    cell    blob,      -- Cell.MarshalBinary
//	    PRIMARY KEY ((counter), id, kind)
//	) WITH CLUSTERING ORDER BY (id DESC, kind ASC);
//
// but any store with ordered partitions can implement it. Every method takes
// a context first and returns errors wrapping crdt sentinels (ErrUnavailable
// when a write is known not to have landed, ErrAmbiguousWrite when it may
// have). Implementations must be safe for concurrent use.
type Store interface {
	// Insert writes every entry (an upsert per (counter, id, kind): writing
	// a key again replaces its cell) atomically: either all entries land or
	// none do. Entries may address several counters (Cassandra: one logged
	// batch). Insert never reads. Invalid cells are refused before anything
	// is written.
	Insert(ctx context.Context, entries []Entry) error

	// Scan calls fn with the cells of counter in clustering order (see
	// CompareCells: ID descending, then merge before regular) until fn
	// returns false or the cells run out. Implementations fetch pages
	// lazily and must not read far past the point where fn stopped
	// (Cassandra: a paged SELECT closed early). A scan is not a snapshot:
	// cells written or deleted during the scan may or may not be seen.
	Scan(ctx context.Context, counter string, fn func(Cell) bool) error

	// DeleteCovered removes, atomically, every cell that the merge cell
	// with ID id covers: the regular cell with that ID and every cell with
	// an older ID (Cassandra: a range delete "id < ?" plus a row delete of
	// (id, 'r'), in one batch). The merge cell itself and newer cells stay.
	DeleteCovered(ctx context.Context, counter string, id ID) error

	// DeleteCounter removes the whole counter (Cassandra: one partition
	// delete).
	DeleteCounter(ctx context.Context, counter string) error
}
