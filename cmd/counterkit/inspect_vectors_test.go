package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inspect refuses every malformed vector of the spec (testdata/vectors,
// "malformed") as its type's decoder does: exit 1, naming the sentinel
// of the vector's kind, in either output format. Its own reading of the
// envelope called a header claiming 2^31 elements corrupt, where every
// decoder says too_large (review E of stop 101). Vectors of another type
// (type_mismatch) and of a tally kind (whose decoder inspect picks from
// the bytes) are passed over.
func TestInspectRefusesTheMalformedVectors(t *testing.T) {
	sentinel := map[string]string{
		"corrupt":             "crdt.ErrCorruptEncoding",
		"too_large":           "crdt.ErrTooLarge",
		"unsupported_version": "crdt.ErrUnsupportedVersion",
	}
	files, err := filepath.Glob("../../testdata/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files (%v)", err)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Malformed []struct{ Name, Decoder, Hex, Error string } `json:"malformed"`
		}
		if json.Unmarshal(raw, &doc) != nil {
			continue // a file of another shape (driver vectors)
		}
		for _, m := range doc.Malformed {
			if m.Error == "type_mismatch" || m.Hex == "" || strings.HasPrefix(m.Decoder, "tally") {
				continue
			}
			want, ok := sentinel[m.Error]
			if !ok {
				t.Fatalf("%s %q: unknown kind %q", filepath.Base(f), m.Name, m.Error)
			}
			n++
			for _, o := range []string{"table", "json"} {
				var out, errOut bytes.Buffer
				code := runInspect([]string{"-hex", m.Hex, "-o", o}, nil, &out, &errOut)
				if code != 1 || !strings.Contains(errOut.String(), want) {
					t.Errorf("%s %q (-o %s): exit %d, %q; want 1 and %s", filepath.Base(f), m.Name, o, code, strings.TrimSpace(errOut.String()), want)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d malformed vectors read", n)
	}
	t.Logf("%d malformed vectors", n)
}
