module github.com/counterkit/counterkit/examples/ledger

go 1.25.0

replace (
	github.com/counterkit/counterkit => ../..
	github.com/counterkit/counterkit/adapters/embedded => ../../adapters/embedded
)

require (
	github.com/counterkit/counterkit v0.1.0
	github.com/counterkit/counterkit/adapters/embedded v0.1.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
