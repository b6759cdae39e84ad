package riaktest

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// riakPrefix is what Riak prints before its ~p list of refused properties.
const riakPrefix = "Invalid bucket properties: "

func riakPrint(t *pterm) string { return riakPrefix + erlPrint(t, len(riakPrefix)+1) }

// TestErlPrintGolden: terms of the shapes Riak refuses bucket properties
// with, and what Erlang/OTP 25 printed for them (erl -eval
// 'io:format("~s", [io_lib:format("Invalid bucket properties: ~p", [T])])').
func TestErlPrintGolden(t *testing.T) {
	q := func(p string) *pterm { return pTuple(pAtom(p), pAtom("not_valid_quorum")) }
	s := func(p, reason string) *pterm { return pTuple(pAtom(p), pString(reason)) }
	lww := s("dvv_enabled", "If last_write_wins is true, dvv_enabled must be false")
	for _, c := range []struct {
		term *pterm
		want string
	}{
		{pList(q("r")), `[{r,not_valid_quorum}]`},
		{pList(q("rw"), q("w"), q("r")), "[{rw,not_valid_quorum},\n" +
			"                            {w,not_valid_quorum},\n" +
			"                            {r,not_valid_quorum}]"},
		{pList(lww), "[{dvv_enabled,\n" +
			`                                "If last_write_wins is true, dvv_enabled must be false"}]`},
		{pList(lww, pTuple(pAtom("n_val"), pAtom("not_integer")), s("consistent", "Write once buckets must not be consistent=true")),
			"[{dvv_enabled,\n" +
				`                                "If last_write_wins is true, dvv_enabled must be false"},` + "\n" +
				"                            {n_val,not_integer},\n" +
				"                            {consistent,\n" +
				`                                "Write once buckets must not be consistent=true"}]`},
		{pList(pTuple(pAtom("n_val"), pAtom("not_integer")), s("consistent", "cannot update consistent property")),
			"[{n_val,not_integer},\n" +
				`                            {consistent,"cannot update consistent property"}]`},
		{pList(s("allow_mult", "Data Type buckets must be allow_mult=true")),
			"[{allow_mult,\n" + `                                "Data Type buckets must be allow_mult=true"}]`},
		{pList(s("datatype", "set not supported for bucket datatype property")),
			`[{datatype,"set not supported for bucket datatype property"}]`},
		{pList(s("datatype", "`datatype` must not be defined.")), "[{datatype,\"`datatype` must not be defined.\"}]"},
		{pList(s("datatype", "Ω\n\"q\"")), `[{datatype,[937,10,34,113,34]}]`},
		{pList(s("datatype", "é\t\"q\"\\")), `[{datatype,"é\t\"q\"\\"}]`},
	} {
		require.Equal(t, riakPrefix+c.want, riakPrint(c.term))
	}
}

// TestErlPrintMatchesErlang prints random terms with erlPrint and with
// Erlang's own io_lib:format, where erl is installed.
func TestErlPrintMatchesErlang(t *testing.T) {
	erl, err := exec.LookPath("erl")
	if err != nil {
		t.Skip("erl is not installed: TestErlPrintGolden holds what it printed")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var terms []*pterm
	var src []string
	for range 400 {
		term, s := randomTerm(rng, 0)
		if rng.IntN(2) == 0 { // a refusal's shape: a list of {atom, reason}
			var elems []*pterm
			var ss []string
			for range 1 + rng.IntN(5) {
				a := randomAtom(rng)
				r, rs := randomTerm(rng, 2)
				elems = append(elems, pTuple(pAtom(a), r))
				ss = append(ss, "{"+erlAtom(a)+","+rs+"}")
			}
			term, s = pList(elems...), "["+strings.Join(ss, ",")+"]"
		}
		terms = append(terms, term)
		src = append(src, s)
	}
	file := filepath.Join(t.TempDir(), "terms")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(src, ".\n")+".\n"), 0o600))
	eval := `{ok, Ts} = file:consult(` + strconv.Quote(file) + `), io:setopts([{encoding, unicode}]),
		lists:foreach(fun(T) -> io:put_chars([io_lib:format("Invalid bucket properties: ~p", [T]), 0]) end, Ts), halt().`
	cmd := exec.Command(erl, "-noshell", "-eval", eval)
	cmd.Dir = t.TempDir() // where a crashing erl leaves erl_crash.dump
	out, err := cmd.Output()
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	require.Len(t, got, len(terms))
	for i, term := range terms {
		require.Equal(t, got[i], riakPrint(term), "term %d: %s", i, src[i])
	}
}

func randomAtom(rng *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz_"
	n := 1 + rng.IntN(14)
	if rng.IntN(4) == 0 {
		n += rng.IntN(40)
	}
	b := []byte{letters[rng.IntN(26)]}
	for len(b) < n {
		b = append(b, letters[rng.IntN(len(letters))])
	}
	return string(b)
}

// randomTerm returns a term and its Erlang source (strings as lists of
// character codes, which is the same term).
func randomTerm(rng *rand.Rand, depth int) (*pterm, string) {
	switch k := rng.IntN(6); {
	case k == 0 || depth > 2:
		a := randomAtom(rng)
		return pAtom(a), erlAtom(a)
	case k == 1:
		i := 1000 + rng.IntN(100000)
		return pInt(i), strconv.Itoa(i)
	case k == 2 || k == 3:
		var b strings.Builder
		var codes []string
		n := rng.IntN(90)
		for range n {
			r := rune(' ' + rng.IntN(95))
			switch rng.IntN(40) {
			case 0:
				r = '\n'
			case 1:
				r = 'é'
			case 2:
				r = 0x3a9
			}
			b.WriteRune(r)
			codes = append(codes, strconv.Itoa(int(r)))
		}
		return pString(b.String()), "[" + strings.Join(codes, ",") + "]"
	default:
		var elems []*pterm
		var ss []string
		for range rng.IntN(5) {
			e, s := randomTerm(rng, depth+1)
			elems = append(elems, e)
			ss = append(ss, s)
		}
		if k == 4 {
			return pList(elems...), "[" + strings.Join(ss, ",") + "]"
		}
		return pTuple(elems...), "{" + strings.Join(ss, ",") + "}"
	}
}
