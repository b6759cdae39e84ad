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
//	crc     4 bytes, big-endian CRC-32C (Castagnoli) of the vclock
//	vclock  the rest, non-empty: the bytes Riak returned, as they were
//
// An absent key (no vclock) gives the nil token. Tokens are opaque to
// callers and never stored, so the framing can change between versions.
const tokenMagic = 'R'

// tokenOverhead is what the framing adds to a vclock.
const tokenOverhead = 5

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// makeToken frames vclock; an empty vclock gives the nil token.
func makeToken(vclock []byte) store.Token {
	if len(vclock) == 0 {
		return nil
	}
	t := make([]byte, tokenOverhead, tokenOverhead+len(vclock))
	t[0] = tokenMagic
	binary.BigEndian.PutUint32(t[1:], crc32.Checksum(vclock, castagnoli))
	return append(t, vclock...)
}

// vclockOf returns the vclock a token frames: nil for the nil or empty
// token. A token over MaxTokenSize bytes wraps crdt.ErrTooLarge; one this
// package did not make (wrong magic, too short, checksum mismatch) wraps
// crdt.ErrCorruptEncoding.
func vclockOf(t store.Token) ([]byte, error) {
	switch {
	case len(t) == 0:
		return nil, nil
	case len(t) > MaxTokenSize:
		return nil, fmt.Errorf("%w: token of %d bytes, limit %d", crdt.ErrTooLarge, len(t), MaxTokenSize)
	case len(t) <= tokenOverhead || t[0] != tokenMagic:
		return nil, fmt.Errorf("%w: not a token of the Riak store", crdt.ErrCorruptEncoding)
	}
	vclock := t[tokenOverhead:]
	if binary.BigEndian.Uint32(t[1:]) != crc32.Checksum(vclock, castagnoli) {
		return nil, fmt.Errorf("%w: Riak store token fails its checksum", crdt.ErrCorruptEncoding)
	}
	return vclock, nil
}
