package deltalog

import "github.com/counterkit/counterkit/timeid"

// ID is the time-based id (a version 1 UUID, Cassandra's timeuuid) of a
// cell; see package timeid for its order and encoding. The client that
// issues an update chooses it, so a retry of the update reuses the same ID
// and overwrites the same cell.
type ID = timeid.ID
