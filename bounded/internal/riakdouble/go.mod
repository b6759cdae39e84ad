// This module runs bounded's conformance suite over adapters/riak, against
// riaktest's Riak test double; adapters/riak is a module of its own (it
// depends on the Riak client), which the core module cannot import.
module github.com/counterkit/counterkit/bounded/internal/riakdouble

go 1.24

require (
	github.com/counterkit/counterkit v0.0.0
	github.com/counterkit/counterkit/adapters/riak v0.0.0
)

require (
	github.com/basho/backoff v0.0.0-20150307023525-2ff7c4694083 // indirect
	github.com/basho/riak-go-client v1.7.0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)

replace (
	github.com/counterkit/counterkit => ../../..
	github.com/counterkit/counterkit/adapters/riak => ../../../adapters/riak
)
