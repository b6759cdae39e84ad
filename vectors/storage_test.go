package vectors

// Vectors of testdata/vectors/storage.json: the row keys the tally, the
// windowed log and the balance use in an ordered partition store (SPEC.md
// section 10.2). Checks compare the Go encoders with keys built here from
// the SPEC text alone, and require the keys' unsigned byte order to be the
// id order of SPEC 8.1.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/google/uuid"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
	"github.com/stretchr/testify/require"
)

type storageVectors struct {
	Comment string `json:"comment"`
	// TimeIDs are in id order (SPEC 8.1), oldest first.
	TimeIDs []struct {
		ID   string `json:"id"`
		Asc  string `json:"key_asc"`
		Desc string `json:"key_desc"`
	} `json:"time_ids"`
	Deltalog []struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
		Key  string `json:"key"`
	} `json:"deltalog_rows"`
	Balance []struct {
		UpdateID string `json:"update_id"`
		Kind     string `json:"kind"`
		Version  string `json:"version"`
		Key      string `json:"key"`
	} `json:"balance_rows"`
	Tally []struct {
		Mutator string `json:"mutator"` // empty: the tally row
		Key     string `json:"key"`
	} `json:"tally_rows"`
	Malformed []struct {
		Decoder string `json:"decoder"` // deltalog or balance
		Key     string `json:"key"`
		Error   string `json:"error"`
		Note    string `json:"note"`
	} `json:"malformed_keys"`
}

// specKeyAsc is KEY_ASC of SPEC 10.2, written from the text: the 60-bit
// timestamp shifted left by 4 and or-ed with the version, big-endian, then
// bytes 8..15 each xor 0x80.
func specKeyAsc(u [16]byte) []byte {
	timeLow := uint64(binary.BigEndian.Uint32(u[0:4]))
	timeMid := uint64(binary.BigEndian.Uint16(u[4:6]))
	timeHi := uint64(binary.BigEndian.Uint16(u[6:8]))
	ticks := (timeHi&0x0fff)<<48 | timeMid<<32 | timeLow
	out := binary.BigEndian.AppendUint64(nil, ticks<<4|timeHi>>12)
	for _, b := range u[8:] {
		out = append(out, b^0x80)
	}
	return out
}

func specKeyDesc(u [16]byte) []byte {
	k := specKeyAsc(u)
	for i := range k {
		k[i] = ^k[i]
	}
	return k
}

func genStorage(t *checker) any {
	var v storageVectors
	v.Comment = "Row keys of the ordered partition store (SPEC 10.2). Keys are hex; time_ids are listed oldest first, and their key_asc must sort ascending and key_desc descending as unsigned bytes."
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ids := []timeid.ID{
		timeid.FromParts(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 0, 0),
		timeid.FromParts(at, 0x0000, 0x000000000001),
		timeid.FromParts(at, 0x0000, 0x800000000000), // node byte with the sign bit: signed order puts it first
		timeid.FromParts(at, 0x3fff, 0x000000000000),
		timeid.FromParts(at.Add(100*time.Nanosecond), 0, 0),
		timeid.FromParts(at.Add(time.Hour), 0x2a2a, 0x0a0b0c0d0e0f),
		timeid.FromParts(time.Date(2261, 12, 31, 0, 0, 0, 0, time.UTC), 0x1234, 0xffffffffffff),
	}
	// Oldest first, as SPEC 8.1 orders them.
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j].Compare(ids[j-1]) < 0; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	for _, id := range ids {
		v.TimeIDs = append(v.TimeIDs, struct {
			ID   string `json:"id"`
			Asc  string `json:"key_asc"`
			Desc string `json:"key_desc"`
		}{id.String(), hex.EncodeToString(timeid.AppendAscending(nil, id)), hex.EncodeToString(timeid.AppendDescending(nil, id))})
	}
	for _, id := range ids[1:3] {
		for _, k := range []deltalog.Kind{deltalog.KindMerge, deltalog.KindRegular} {
			v.Deltalog = append(v.Deltalog, struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
				Key  string `json:"key"`
			}{id.String(), string(rune(k)), hex.EncodeToString(deltalog.EncodeKey(id, k))})
		}
	}
	for _, r := range []balance.Row{balance.NormalRow(ids[2], 25), balance.NormalRow(ids[2], -7),
		{UpdateID: ids[3], Kind: balance.KindSum, Version: ids[3]}, {UpdateID: ids[1], Kind: balance.KindTombstone, Version: ids[4]}} {
		k := r.Key()
		v.Balance = append(v.Balance, struct {
			UpdateID string `json:"update_id"`
			Kind     string `json:"kind"`
			Version  string `json:"version"`
			Key      string `json:"key"`
		}{k.UpdateID.String(), string(rune(k.Kind)), k.Version.String(), hex.EncodeToString(balance.EncodeKey(k))})
	}
	for _, m := range []string{"web-1", "3f2a8c1e-0000-4000-8000-000000000000", ""} {
		key := []byte(tally.TallyRowKey)
		if m != "" {
			key = tally.ShardRowKey(crdt.ActorID(m))
		}
		v.Tally = append(v.Tally, struct {
			Mutator string `json:"mutator"`
			Key     string `json:"key"`
		}{m, hex.EncodeToString(key)})
	}
	good := deltalog.EncodeKey(ids[1], deltalog.KindRegular)
	badKind := bytes.Clone(good)
	badKind[len(badKind)-1] = 'x'
	bk := balance.EncodeKey(balance.NormalRow(ids[2], 25).Key())
	badBKind := bytes.Clone(bk)
	badBKind[timeid.KeyLen] = 'Q'
	for _, c := range []struct {
		dec, note string
		key       []byte
	}{
		{"deltalog", "one byte short", good[:len(good)-1]},
		{"deltalog", "one byte long", append(bytes.Clone(good), 0)},
		{"deltalog", "unknown kind byte", badKind},
		{"balance", "one byte short", bk[:len(bk)-1]},
		{"balance", "unknown kind byte", badBKind},
	} {
		v.Malformed = append(v.Malformed, struct {
			Decoder string `json:"decoder"`
			Key     string `json:"key"`
			Error   string `json:"error"`
			Note    string `json:"note"`
		}{c.dec, hex.EncodeToString(c.key), "corrupt", c.note})
	}
	return v
}

func checkStorage(t *checker, raw []byte) {
	var v storageVectors
	readJSON(t, raw, &v)
	require.NotEmpty(t, v.TimeIDs)
	var prevAsc, prevDesc []byte
	for i, c := range v.TimeIDs {
		id, err := timeid.Parse(c.ID)
		require.NoError(t, err, c.ID)
		asc, desc := must(hex.DecodeString(c.Asc)), must(hex.DecodeString(c.Desc))
		require.Equal(t, asc, specKeyAsc(id), "KEY_ASC from the SPEC text, %s", c.ID)
		require.Equal(t, desc, specKeyDesc(id), "KEY_DESC from the SPEC text, %s", c.ID)
		require.Equal(t, asc, timeid.AppendAscending(nil, id), c.ID)
		require.Equal(t, desc, timeid.AppendDescending(nil, id), c.ID)
		back, err := timeid.DecodeAscending(asc)
		require.NoError(t, err)
		require.Equal(t, id, back)
		if i > 0 {
			require.Negative(t, bytes.Compare(prevAsc, asc), "key_asc of %s sorts after its predecessor", c.ID)
			require.Positive(t, bytes.Compare(prevDesc, desc), "key_desc of %s sorts before its predecessor", c.ID)
		}
		prevAsc, prevDesc = asc, desc
	}
	for _, c := range v.Deltalog {
		id, err := timeid.Parse(c.ID)
		require.NoError(t, err)
		key := must(hex.DecodeString(c.Key))
		require.Equal(t, append(specKeyDesc(id), c.Kind[0]), key, "SPEC 10.2 deltalog row key")
		require.Equal(t, key, deltalog.EncodeKey(id, deltalog.Kind(c.Kind[0])))
		gotID, gotKind, err := deltalog.DecodeKey(key)
		require.NoError(t, err)
		require.Equal(t, id, gotID)
		require.Equal(t, c.Kind[0], byte(gotKind))
	}
	for _, c := range v.Balance {
		u, err := timeid.Parse(c.UpdateID)
		require.NoError(t, err)
		ver, err := uuid.Parse(c.Version) // an N row's version is its amount key, not a time id
		require.NoError(t, err)
		key := must(hex.DecodeString(c.Key))
		want := append(append(specKeyDesc(u), c.Kind[0]), specKeyAsc(ver)...)
		require.Equal(t, want, key, "SPEC 10.2 balance row key")
		k := balance.Key{UpdateID: u, Kind: balance.Kind(c.Kind[0]), Version: balance.ID(ver)}
		require.Equal(t, key, balance.EncodeKey(k))
		back, err := balance.DecodeKey(key)
		require.NoError(t, err)
		require.Equal(t, k, back)
	}
	for _, c := range v.Tally {
		key := must(hex.DecodeString(c.Key))
		if c.Mutator == "" {
			require.Equal(t, []byte{'t'}, key, "SPEC 10.2 tally row")
			require.Equal(t, []byte(tally.TallyRowKey), key)
			continue
		}
		require.Equal(t, append([]byte{'s'}, c.Mutator...), key, "SPEC 10.2 shard row")
		require.Equal(t, key, tally.ShardRowKey(crdt.ActorID(c.Mutator)))
	}
	require.NotEmpty(t, v.Malformed)
	for _, c := range v.Malformed {
		key := must(hex.DecodeString(c.Key))
		var err error
		switch c.Decoder {
		case "deltalog":
			_, _, err = deltalog.DecodeKey(key)
		case "balance":
			_, err = balance.DecodeKey(key)
		default:
			t.Fatalf("unknown decoder %q", c.Decoder)
		}
		requireKind(t, c.Error, err, "%s: %s", c.Decoder, c.Note)
	}
}
