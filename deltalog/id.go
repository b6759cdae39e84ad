package deltalog

import (
	"time"

	"github.com/counterkit/counterkit/timeid"
)

// ID is the time-based id (a version 1 UUID, Cassandra's timeuuid) of a
// cell; see package timeid for its order and encoding. The client that
// issues an update chooses it, so a retry of the update reuses the same ID
// and overwrites the same cell.
type ID = timeid.ID

// NewIDAt returns timeid.New(t).
//
// Deprecated: use timeid.New.
func NewIDAt(t time.Time) ID { return timeid.New(t) }

// IDFromParts returns timeid.FromParts(t, clockSeq, node).
//
// Deprecated: use timeid.FromParts.
func IDFromParts(t time.Time, clockSeq uint16, node uint64) ID {
	return timeid.FromParts(t, clockSeq, node)
}

// ParseID returns timeid.Parse(s).
//
// Deprecated: use timeid.Parse.
func ParseID(s string) (ID, error) { return timeid.Parse(s) }
