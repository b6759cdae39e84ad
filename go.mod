module github.com/counterkit/counterkit

go 1.24

require (
	github.com/axiomhq/hyperloglog v0.3.0
	github.com/dgryski/go-metro v0.0.0-20250106013310-edb8663e5e33
	github.com/google/uuid v1.6.0
	github.com/leanovate/gopter v0.2.11
	github.com/stretchr/testify v1.12.1
	github.com/vmihailenco/msgpack/v5 v5.4.1
)

require (
	github.com/kamstrup/intmap v0.5.2 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
