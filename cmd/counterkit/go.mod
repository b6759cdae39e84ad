module github.com/counterkit/counterkit/cmd/counterkit

go 1.25.0

replace github.com/counterkit/counterkit => ../..

require (
	github.com/apache/cassandra-gocql-driver/v2 v2.1.2
	github.com/basho/riak-go-client v1.7.0
	github.com/counterkit/counterkit v0.1.0
	github.com/counterkit/counterkit/adapters/cassandra v0.1.0
	github.com/counterkit/counterkit/adapters/embedded v0.1.0
	github.com/counterkit/counterkit/adapters/riak v0.1.0
	github.com/spf13/pflag v1.1.0
	github.com/stretchr/testify v1.12.1
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/axiomhq/hyperloglog v0.3.0 // indirect
	github.com/basho/backoff v0.0.0-20150307023525-2ff7c4694083 // indirect
	github.com/datastax/go-cassandra-native-protocol v0.0.0-20240626123646-2abea740da8d // indirect
	github.com/dgryski/go-metro v0.0.0-20250106013310-edb8663e5e33 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kamstrup/intmap v0.5.2 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.45.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
)

replace (
	github.com/counterkit/counterkit/adapters/cassandra => ../../adapters/cassandra
	github.com/counterkit/counterkit/adapters/embedded => ../../adapters/embedded
	github.com/counterkit/counterkit/adapters/riak => ../../adapters/riak
)
