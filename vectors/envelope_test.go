package vectors

// Vectors of envelope.json: generation (generateFile) and checks (checkFile).
// See shared.go for what every file shares, and SPEC.md section 11.

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/tpncounter"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// envelope.json

type envelopeFile struct {
	Comment string `json:"comment"`
	// Ints are int64 values and their only accepted encoding.
	Ints []struct {
		Value I64    `json:"value"`
		Hex   string `json:"hex"`
	} `json:"ints"`
	// IDs are actor/transaction id candidates and whether they are valid.
	IDs []struct {
		ID    *string `json:"id,omitempty"`
		IDHex string  `json:"id_hex,omitempty"`
		Valid bool    `json:"valid"`
	} `json:"ids"`
	// Empty is the encoding of the empty state of every state type.
	Empty []struct {
		Decoder string `json:"decoder"`
		Hex     string `json:"hex"`
	} `json:"empty"`
	Malformed []Malformed `json:"malformed"`
}

func genEnvelope(t *checker) any {
	var f envelopeFile
	f.Comment = "Envelope, integer and id rules shared by every type. See SPEC.md sections 2-3."
	for _, v := range []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64} {
		e := wire.NewEncoder("x", 1)
		e.Int(v)
		b := must(e.Bytes())
		pre := len(refEnc{}.arr(3).str("x").uint(1).b)
		f.Ints = append(f.Ints, struct {
			Value I64    `json:"value"`
			Hex   string `json:"hex"`
		}{I64(v), hex.EncodeToString(b[pre:])})
	}
	for _, id := range []string{"a", "alice", "Zoë", "日本", "🦀", "with space", strings.Repeat("x", 255),
		"", strings.Repeat("x", 256), "a\x00b", "tab\there", "del\x7f", "nel\u0085", "\xff\xfe", "line\n"} {
		s, h := jsonID(id)
		f.IDs = append(f.IDs, struct {
			ID    *string `json:"id,omitempty"`
			IDHex string  `json:"id_hex,omitempty"`
			Valid bool    `json:"valid"`
		}{s, h, crdt.ActorID(id).Validate() == nil})
	}
	addEmpty := func(dec string, b []byte) {
		require.NoError(t, decodeAs(t, dec, b))
		f.Empty = append(f.Empty, struct {
			Decoder string `json:"decoder"`
			Hex     string `json:"hex"`
		}{dec, hex.EncodeToString(b)})
	}
	addEmpty("gcounter", must(gcounter.New().MarshalBinary()))
	addEmpty("pncounter", must(pncounter.New().MarshalBinary()))
	addEmpty("tgcounter", must(must(tpncounter.NewGCounter(tpncounter.Options{})).MarshalBinary()))
	addEmpty("tpncounter", must(must(tpncounter.New(tpncounter.Options{})).MarshalBinary()))

	g := "gcounter"
	body := refEnc{}.arr(1).arr(2).str("a").int(5) // [["a", 5]]
	good := append(env(g, 1).b, body.b...)
	require.NoError(t, decodeAs(t, g, good))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	f.Malformed = []Malformed{
		mal("empty input", g, []byte{}, t),
		mal("not an array", g, []byte{0x01}, t),
		mal("nil instead of envelope", g, []byte{0xc0}, t),
		mal("envelope of two elements", g, refEnc{}.arr(2).str(g).uint(1).b, t),
		mal("envelope of four elements", g, cat(refEnc{}.arr(4).str(g).uint(1).b, body.b, []byte{0xc0}), t),
		mal("tag is not a string", g, cat(refEnc{}.arr(3).uint(1).uint(1).b, body.b), t),
		mal("tag longer than 64 bytes", g, cat(refEnc{}.arr(3).str(strings.Repeat("g", 65)).uint(1).b, body.b), t),
		mal("wrong tag", g, cat(env("pncounter", 1).b, body.b), t),
		mal("unknown tag", g, cat(env("nosuchtype", 1).b, body.b), t),
		mal("tag differs in case", g, cat(env("GCounter", 1).b, body.b), t),
		mal("version 0", g, cat(env(g, 0).b, body.b), t),
		mal("version 3 (newer than this build)", g, cat(env(g, 3).b, body.b), t),
		mal("version is negative", g, cat(refEnc{}.arr(3).str(g).int(-1).b, body.b), t),
		mal("version is a string", g, cat(refEnc{}.arr(3).str(g).str("1").b, body.b), t),
		mal("version is a float", g, cat(refEnc{}.arr(3).str(g).raw(0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0).b, body.b), t),
		mal("tag checked before version", "pncounter", cat(env(g, 9).b, body.b), t, "a wrong tag is type_mismatch even when the version is unsupported too"),
		mal("trailing byte", g, cat(good, []byte{0xc0}), t),
		mal("truncated body", g, good[:len(good)-1], t),
		mal("truncated in tag", g, good[:4], t),
		mal("array header claims more elements than bytes remain", g, cat(env(g, 1).b, []byte{0xdc, 0x00, 0x10, 0x92}), t,
			"16 pairs in the canonical array16 header (dc 0010, below the 65536 cap) but 1 byte remains: rejected for the count"),
		mal("envelope header claims more elements than bytes remain", g, []byte{0xdc, 0x00, 0x10, 0xa1, 'g'}, t,
			"canonical array16 header of 16 elements with 2 bytes left: the remaining-bytes check comes before the length-3 check"),
		mal("envelope header claims 2^31 elements", g, []byte{0xdd, 0x80, 0, 0, 0, 0xa1, 'g'}, t,
			"above the envelope's nominal cap of 2^31-1: too_large (SPEC.md 3.2, section 12 item 7)"),
		mal("int 5 as int8 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xd0, 5).b), t),
		mal("int 5 as uint8 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xcc, 5).b), t),
		mal("int 5 as uint64 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 5).b), t),
		mal("int 200 as uint16 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xcd, 0, 200).b), t),
		mal("uint64 above int64 range", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").uint(1<<63).b), t),
		mal("float where int is required", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xca, 0x40, 0xa0, 0, 0).b), t),
		mal("bin where string is required", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).bin([]byte("a")).int(5).b), t),
		mal("map where array is required", g, cat(env(g, 1).b, []byte{0x80}), t),
		mal("id of 256 bytes", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str(strings.Repeat("x", 256)).int(5).b), t),
		mal("id with control character", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a\x01").int(5).b), t),
		mal("id not UTF-8", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("\xc3\x28").int(5).b), t),
		mal("empty id", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("").int(5).b), t),
		mal("string header claims 2 GiB", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).raw(0xdb, 0x7f, 0xff, 0xff, 0xff, 'a').b), t),
	}
	// Non-canonical encodings: every header and integer must use its
	// smallest msgpack form, so each state has exactly one encoding.
	nonCanon := func(name, dec string, in []byte) {
		m := mal(name, dec, in, t, "non-canonical: not the smallest msgpack form")
		require.Equal(t, "corrupt", m.Error, name)
		f.Malformed = append(f.Malformed, m)
	}
	nonCanon("version 1 as uint64", g, cat(refEnc{}.arr(3).str(g).raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 1).b, body.b))
	nonCanon("tag as str8", g, cat(refEnc{}.arr(3).raw(0xd9, 8).raw([]byte(g)...).uint(1).b, body.b))
	nonCanon("envelope header as array16", g, cat([]byte{0xdc, 0, 3}, refEnc{}.str(g).uint(1).b, body.b))
	nonCanon("actor as str8", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).raw(0xd9, 1, 'a').int(5).b))
	tg := must(tpncounter.NewGCounter(tpncounter.Options{}))
	_ = must(tg.Apply("a", "t1", 5))
	nonCanon("tgcounter seq 1 as uint64", "tgcounter",
		cat(env("tgcounter", 1).b, refEnc{}.arr(1).arr(5).str("a").raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 1).int(0).arr(1).arr(2).str("t1").int(5).arr(0).b))
	st := must(aggKinds["stats"].build(ints(2)))
	_ = st
	nonCanon("tally stats sum of squares as uint64", "tally.shard:stats",
		env("tally.shard", 1).arr(4).str("stats").str("m").int(1).arr(6).int(1).int(2).int(2).int(2).uint(0).raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 4).b)
	// Each fixed-width form one size too wide, at the boundary and inside
	// it; the negative values sit in tally's sum, the one field here that
	// holds them.
	tsum := func(raw ...byte) []byte {
		return env("tally.shard", 1).arr(4).str("sum").str("m").int(1).raw(raw...).b
	}
	gcount := func(raw ...byte) []byte { return cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(raw...).b) }
	nonCanon("count 65535 as uint32", g, gcount(0xce, 0, 0, 0xff, 0xff))
	nonCanon("count 40000 as uint32", g, gcount(0xce, 0, 0, 0x9c, 0x40))
	nonCanon("count 5 as int16", g, gcount(0xd1, 0, 5))
	nonCanon("count 200 as int32", g, gcount(0xd2, 0, 0, 0, 200))
	nonCanon("count 40000 as int64", g, gcount(0xd3, 0, 0, 0, 0, 0, 0, 0x9c, 0x40))
	nonCanon("tally sum -128 as int16", "tally.shard:sum", tsum(0xd1, 0xff, 0x80))
	nonCanon("tally sum -5 as int16", "tally.shard:sum", tsum(0xd1, 0xff, 0xfb))
	nonCanon("tally sum -32768 as int32", "tally.shard:sum", tsum(0xd2, 0xff, 0xff, 0x80, 0x00))
	nonCanon("tally sum -200 as int32", "tally.shard:sum", tsum(0xd2, 0xff, 0xff, 0xff, 0x38))
	nonCanon("tally sum -2147483648 as int64", "tally.shard:sum", tsum(0xd3, 0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0))
	nonCanon("tally sum -40000 as int64", "tally.shard:sum", tsum(0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x63, 0xc0))
	nonCanon("actor of 255 bytes as str16", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).raw(0xda, 0, 255).raw(bytes.Repeat([]byte("x"), 255)...).int(5).b))
	nonCanon("actor of 1 byte as str16", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).raw(0xda, 0, 1, 'a').int(5).b))
	return f
}

func checkEnvelope(t *checker, raw []byte) {
	var f envelopeFile
	readJSON(t, raw, &f)
	require.NotEmpty(t, f.Ints)
	for _, c := range f.Ints {
		require.Equal(t, c.Hex, refEnc{}.int(int64(c.Value)).hex(), "reference encoding of %d", c.Value)
		e := wire.NewEncoder("x", 1)
		e.Int(int64(c.Value))
		b := must(e.Bytes())
		require.True(t, strings.HasSuffix(hex.EncodeToString(b), c.Hex), "wire encoding of %d", c.Value)
		d, _, err := wire.NewDecoder(b, "x", 1, 100)
		require.NoError(t, err)
		v, err := d.Int()
		require.NoError(t, err)
		require.EqualValues(t, c.Value, v)
	}
	require.NotEmpty(t, f.IDs)
	for _, c := range f.IDs {
		id := idOf(t, c.ID, c.IDHex)
		require.Equal(t, c.Valid, validID(id), "spec rule for %q", id)
		require.Equal(t, c.Valid, crdt.ActorID(id).Validate() == nil, "ActorID %q", id)
		require.Equal(t, c.Valid, crdt.TxnID(id).Validate() == nil, "TxnID %q", id)
	}
	for _, c := range f.Empty {
		require.NoError(t, decodeAs(t, c.Decoder, unhex(t, c.Hex)))
	}
	wantEmpty := map[string]string{
		"gcounter":   env("gcounter", 2).arr(0).hex(),
		"pncounter":  env("pncounter", 2).arr(0).hex(),
		"tgcounter":  env("tgcounter", 2).arr(0).hex(),
		"tpncounter": env("tpncounter", 2).arr(2).arr(0).arr(0).hex(),
	}
	require.Len(t, f.Empty, len(wantEmpty))
	for _, c := range f.Empty {
		require.Equal(t, wantEmpty[c.Decoder], c.Hex, c.Decoder)
	}
	checkMalformed(t, f.Malformed)
}
