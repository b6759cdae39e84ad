// Package cassandratest provides Server, a test double of a one-node
// Cassandra 4.0 cluster: an in-process server on a loopback port that
// speaks the CQL native protocol (v3, v4 and v5, with the frame, segment
// and message codecs of github.com/datastax/go-cassandra-native-protocol),
// so that code using
// the real gocql driver (github.com/apache/cassandra-gocql-driver/v2), the
// cassandra adapter and the command-line tools can be tested without a
// cluster. It is not a database and must never be used as one.
//
// It plays the statements the adapter and the tools send, with the rules
// the adapter's model states (adapters/cassandra/model_test.go):
//
//   - CREATE KEYSPACE (SimpleStrategy, or NetworkTopologyStrategy naming
//     the node's data center, datacenter1), CREATE
//     TABLE with one partition key column, at most one clustering column
//     and columns of type text, varchar, blob, bigint, int, boolean or
//     counter; DROP KEYSPACE, DROP TABLE, USE;
//   - INSERT ... [USING TIMESTAMP t] [AND TTL n], UPDATE ... SET c = ?,
//     UPDATE ... SET c = c + ? on counters, DELETE of a row, a clustering
//     range or a partition [USING TIMESTAMP t], and SELECT of one
//     partition (columns, *, WRITETIME and TTL of a column, a clustering
//     slice, LIMIT, paging), as QUERY, PREPARE and EXECUTE (an unknown id
//     is answered Unprepared), and BATCH of prepared and unprepared
//     statements (LOGGED, UNLOGGED, COUNTER);
//   - the system tables drivers and `counterkit check cassandra` read:
//     system.local, system.peers and system.peers_v2 (no peers),
//     system_schema.keyspaces, tables and columns, system_views.settings.
//     system.local also has a native_port column (the listener's random
//     port), which gocql reads to reach the node.
//
// Cells reconcile by timestamp (at equal timestamps: a deletion, then an
// expiring cell, the later expiry, the greater value); a deletion at t
// shadows writes at t or below; a TTL counts from the node's second
// (Options.Now). A batch is applied at once, under one lock, so a reader
// never sees part of it; Cassandra isolates a batch only within each
// partition, so code that reads several partitions must not count on it.
// Requests are refused as Cassandra 4.0 refuses them, with
// its error codes and messages: "unconfigured table", "Key may not be
// empty", "Key length of N is longer than maximum of 65535", "String
// didn't validate.", "Invalid null value in condition for column c", TTL
// limits (a null TTL is none), counters' consistency levels and batch
// types, "Batch too large" (a batch over several partitions above 50
// KiB, sized as 4.0 sizes it: 36 bytes a row besides its values, 12 a
// partition; one partition key of one keyspace is one mutation, whatever
// its tables), a write failure for a partition's mutation above 16 MiB, and
// Unavailable for a level needing more replicas than the one node holds
// at the keyspace's replication factor.
//
// Anything else (composite keys, collections, IN, secondary indexes,
// lightweight transactions, reads across partitions, table options) is
// refused with an InvalidRequest or SyntaxError naming the double's
// limit; it never crashes or hangs. Tombstone thresholds, the 16 MiB
// frame limit and read or write timeouts are not played: Options.Latency
// delays answers instead.
//
// The connections are the double's own: the library's client.CqlServer
// cannot reassemble a v5 request spread over several segments (a nil
// pointer panic that ends the test binary) and races with itself when a
// connection closes, which fails tests run with -race. Compression is not
// offered. For speed, set gocql's ClusterConfig.WriteCoalesceWaitTime to
// 0: each request otherwise waits 200µs.
package cassandratest
