// This module runs bounded's conformance suite over adapters/embedded, which
// is a module of its own (it depends on bbolt); the core module cannot
// import it.
module github.com/counterkit/counterkit/bounded/internal/embeddedtest

go 1.25.0

require (
	github.com/counterkit/counterkit v0.0.0
	github.com/counterkit/counterkit/adapters/embedded v0.0.0
)

require (
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.45.0 // indirect
)

replace (
	github.com/counterkit/counterkit => ../../..
	github.com/counterkit/counterkit/adapters/embedded => ../../../adapters/embedded
)
