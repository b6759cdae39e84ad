package cassandra

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
)

// MaxIdentifierLen is the longest keyspace or table name the adapter
// accepts. Cassandra itself refuses names longer than 48 characters.
const MaxIdentifierLen = 48

// MaxKeyLen is the longest key (Siblings) or partition key (Partitions),
// in bytes: the core's limit for every storage key (crdt.MaxKeyLen).
const MaxKeyLen = crdt.MaxKeyLen

// ErrInvalidKey is returned when a key or partition key breaks crdt.ValidateKey's
// rules: empty, longer than MaxKeyLen, not valid UTF-8, or containing a
// control character (NUL included). It is crdt.ErrInvalidKey, which wraps
// crdt.ErrInvalidIdentifier.
var ErrInvalidKey = crdt.ErrInvalidKey

// CheckIdentifier reports whether name is a keyspace or table name the
// adapter will put into CQL text. Only lower-case ASCII letters, digits and
// underscores are accepted, starting with a letter, 1..MaxIdentifierLen
// characters; the adapter then always double-quotes the name, so reserved
// words are harmless and nothing in a name can change the meaning of a
// statement. The error wraps crdt.ErrInvalidIdentifier.
func CheckIdentifier(name string) error {
	if reason := identProblem(name); reason != "" {
		shown := name
		if len(shown) > 60 {
			shown = shown[:60] + "..."
		}
		return fmt.Errorf("%w: %q %s", crdt.ErrInvalidIdentifier, shown, reason)
	}
	return nil
}

func identProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxIdentifierLen:
		return fmt.Sprintf("is %d characters, longer than %d", len(name), MaxIdentifierLen)
	case name[0] < 'a' || name[0] > 'z':
		return "must start with a lower-case ASCII letter"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' {
			continue
		}
		return fmt.Sprintf("contains %q at byte %d; only a-z, 0-9 and _ are allowed", c, i)
	}
	return ""
}

// quote returns a validated identifier in double quotes. Callers validate
// first; quote never sees a name containing a quote character.
func quote(name string) string { return `"` + name + `"` }
