package riak

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// The token Fetch hands out frames Riak's vclock so that Put and Delete can
// tell a token this package made from any other bytes before sending
// anything, whatever Riak's own vclock decoder would make of them:
//
//	magic   1 byte, 0x52 ('R')
//	crc     4 bytes, big-endian CRC-32C (Castagnoli) of the bucket type,
//	        the bucket and the key (each preceded by its length as a
//	        uvarint), then the vclock
//	vclock  the rest, non-empty: the bytes Riak returned, as they were
//
// The checksum binds a token to its key: a Put or Delete given the token of
// another key or bucket would send a vclock that may cover values of this
// key its caller never read, and drop them, so it is refused like a damaged
// token. An absent key (no vclock) gives the nil token. Tokens are opaque to
// callers and never stored, so the framing can change between versions.
const tokenMagic = 'R'

// tokenOverhead is what the framing adds to a vclock.
const tokenOverhead = 5

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// tokenSum is the checksum of a token of key in st's bucket framing vclock.
func tokenSum(st settings, key string, vclock []byte) uint32 {
	var b []byte
	for _, name := range []string{st.bucketType, st.bucket, key} {
		b = append(binary.AppendUvarint(b, uint64(len(name))), name...)
	}
	return crc32.Update(crc32.Checksum(b, castagnoli), castagnoli, vclock)
}

// makeToken frames vclock, read for key in st's bucket; an empty vclock
// gives the nil token.
func makeToken(st settings, key string, vclock []byte) store.Token {
	if len(vclock) == 0 {
		return nil
	}
	t := make([]byte, tokenOverhead, tokenOverhead+len(vclock))
	t[0] = tokenMagic
	binary.BigEndian.PutUint32(t[1:], tokenSum(st, key, vclock))
	return append(t, vclock...)
}

// vclockOf returns the vclock a token of key in st's bucket frames: nil for
// the nil or empty token. A token over MaxTokenSize bytes wraps
// crdt.ErrTooLarge; one this package did not make for that key (wrong
// magic, too short, checksum mismatch: damaged, or fetched for another key
// or bucket) wraps crdt.ErrCorruptEncoding.
func vclockOf(st settings, key string, t store.Token) ([]byte, error) {
	switch {
	case len(t) == 0:
		return nil, nil
	case len(t) > MaxTokenSize:
		return nil, fmt.Errorf("%w: token of %d bytes, limit %d", crdt.ErrTooLarge, len(t), MaxTokenSize)
	case len(t) <= tokenOverhead || t[0] != tokenMagic:
		return nil, fmt.Errorf("%w: not a token of the Riak store", crdt.ErrCorruptEncoding)
	}
	vclock := t[tokenOverhead:]
	if binary.BigEndian.Uint32(t[1:]) != tokenSum(st, key, vclock) {
		return nil, fmt.Errorf("%w: Riak store token fails its checksum: damaged, or fetched for another key or bucket", crdt.ErrCorruptEncoding)
	}
	return vclock, nil
}
