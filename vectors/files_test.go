package vectors

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// files maps the vector files checked with a *checker (which plays the
// role of testing.T and turns a panic into a failed vector) to the
// function that generates each and the one that checks it. The files
// checked with *testing.T directly are in vectorFiles (vectors_test.go).
//
// To check a new file: write gen<Name> and check<Name> in <name>_test.go
// and list them here; TestVectorFilesAreRead fails until then.
var files = map[string]struct {
	gen   func(t *checker) any
	check func(t *checker, raw []byte)
}{
	"envelope.json":   {genEnvelope, checkEnvelope},
	"gcounter.json":   {genGCounter, checkGCounter},
	"pncounter.json":  {genPNCounter, checkPNCounter},
	"tpncounter.json": {genTPN, checkTPN},
	"tally.json":      {genTally, checkTally},
	"deltalog.json":   {genDeltalog, checkDeltalog},
	"balance.json":    {genBalance, checkBalance},
	"storage.json":    {genStorage, checkStorage},
}

// errNoChecker is returned by checkFile and generateFile for a file name
// that is not in files.
var errNoChecker = errors.New("no checker")

// checkFile checks data, the contents of the vector file name (its base
// name, as in files), and reports every vector to r. It returns
// errNoChecker when name is not in files; every other failure, an
// unreadable file included, goes to r.
func checkFile(r Reporter, name string, data []byte) error {
	f, ok := files[name]
	if !ok {
		return fmt.Errorf("%s: %w", name, errNoChecker)
	}
	guard(r, func(t *checker) { f.check(t, data) })
	return nil
}

// generateFile builds the vector file name from this build's behaviour and
// returns it as indented JSON. The shipped files were made by it and then
// locked: regenerate them only after a deliberate change, and review the
// difference (go test ./vectors -run TestVectors -update).
func generateFile(name string) ([]byte, error) {
	f, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, errNoChecker)
	}
	var failures failureList
	var v any
	guard(&failures, func(t *checker) { v = f.gen(t) })
	if len(failures) > 0 {
		return nil, fmt.Errorf("generating %s: %s", name, strings.Join(failures, "; "))
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("generating %s: %w", name, err)
	}
	return append(b, '\n'), nil
}

// failureList is a Reporter that keeps the failure messages.
type failureList []string

func (l *failureList) Run(name string, check func(Reporter)) {
	check(&prefixed{name, l})
}

func (l *failureList) Fail(msg string) { *l = append(*l, msg) }

type prefixed struct {
	name string
	l    *failureList
}

func (p *prefixed) Run(name string, check func(Reporter)) {
	check(&prefixed{p.name + "/" + name, p.l})
}

func (p *prefixed) Fail(msg string) { p.l.Fail(p.name + ": " + msg) }
