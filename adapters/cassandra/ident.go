package cassandra

import (
	"fmt"
	"slices"

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

// systemKeyspaces are the keyspaces Cassandra (4.0 and later) keeps for
// itself.
var systemKeyspaces = []string{
	"system", "system_schema", "system_auth", "system_distributed",
	"system_traces", "system_views", "system_virtual_schema",
}

// CheckIdentifier reports whether name is a keyspace or table name the
// adapter will put into CQL text. Only lower-case ASCII letters, digits and
// underscores are accepted, starting with a letter, 1..MaxIdentifierLen
// characters; the adapter then always double-quotes the name, so reserved
// words are harmless and nothing in a name can change the meaning of a
// statement. The names of Cassandra's own keyspaces (system,
// system_schema, system_auth, system_distributed, system_traces,
// system_views, system_virtual_schema) are refused, for tables too: the
// adapter's table names, a prefix and a fixed suffix, never are one. The
// error wraps crdt.ErrInvalidIdentifier.
func CheckIdentifier(name string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %q "+format, append([]any{crdt.ErrInvalidIdentifier, truncate(name, 60)}, args...)...)
	}
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > MaxIdentifierLen:
		return bad("is %d characters, longer than %d", len(name), MaxIdentifierLen)
	case name[0] < 'a' || name[0] > 'z':
		return bad("must start with a lower-case ASCII letter")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return bad("contains %q at byte %d; only a-z, 0-9 and _ are allowed", c, i)
		}
	}
	if slices.Contains(systemKeyspaces, name) {
		return bad("is the name of a Cassandra system keyspace")
	}
	return nil
}

// quote returns a validated identifier in double quotes. Callers validate
// first; quote never sees a name containing a quote character.
func quote(name string) string { return `"` + name + `"` }
