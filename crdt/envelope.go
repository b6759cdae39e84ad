package crdt

// TypeTag names an encoded type inside the envelope. Tags are part of the
// wire format and never change meaning; new types get new tags.
type TypeTag string

// The registered type tags. The string values are the bytes on the wire.
const (
	TagGCounter   TypeTag = "gcounter"
	TagPNCounter  TypeTag = "pncounter"
	TagTGCounter  TypeTag = "tgcounter"
	TagTPNCounter TypeTag = "tpncounter"
	TagTallyShard TypeTag = "tally.shard"
	TagTally      TypeTag = "tally.tally"
	TagLogCell    TypeTag = "deltalog.cell"
	TagBalanceRow TypeTag = "balance.row"
	TagBounded    TypeTag = "bounded"
	TagLedgerTxn  TypeTag = "ledger.txn"
	TagLedgerSeen TypeTag = "ledger.seen"
)

// EnvelopeLen is the length of the envelope every encoded value is, the
// msgpack array [tag, version, body] of SPEC.md 3.3: a decoder checks the
// tag first (ErrTypeMismatch), then the version (ErrUnsupportedVersion),
// then the body with bounded lengths (ErrCorruptEncoding, ErrTooLarge).
const EnvelopeLen = 3

// DefaultMaxEncodedSize is the largest input any decoder accepts unless a
// type documents a different bound: 16 MiB. A length prefix inside the input
// sizes no allocation beyond the elements the input's remaining bytes can
// hold: an input whose header claims more than it holds fails having
// allocated at most 16 bytes per input byte plus 64 KiB
// (TestDecodeAllocation).
const DefaultMaxEncodedSize = 16 << 20
