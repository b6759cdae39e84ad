package pncounter_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// vectorSeeds returns every encoding in testdata/vectors/pncounter.json (a
// string field named hex or ending in _hex, at most 4 KiB), so that the
// fuzz tests start from the language-neutral vectors, valid and malformed.
func vectorSeeds(t testing.TB) [][]byte {
	raw, err := os.ReadFile("../testdata/vectors/pncounter.json")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "hex" || k == "reencoded" || len(k) > 4 && k[len(k)-4:] == "_hex") {
					if b, err := hex.DecodeString(s); err == nil && len(b) <= 1<<12 {
						out = append(out, b)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	if len(out) < 10 {
		t.Fatalf("only %d encodings in the vectors", len(out))
	}
	return out
}
