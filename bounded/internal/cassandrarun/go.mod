// This module runs bounded's conformance suite over adapters/cassandra
// against a real cluster named by CASSANDRA_HOSTS (it skips without one);
// adapters/cassandra is a module of its own, which the core module cannot
// import.
module github.com/counterkit/counterkit/bounded/internal/cassandrarun

go 1.24

require (
	github.com/apache/cassandra-gocql-driver/v2 v2.1.2
	github.com/counterkit/counterkit v0.0.0
	github.com/counterkit/counterkit/adapters/cassandra v0.0.0
)

require (
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
)

replace (
	github.com/counterkit/counterkit => ../../..
	github.com/counterkit/counterkit/adapters/cassandra => ../../../adapters/cassandra
)
