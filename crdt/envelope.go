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
)

// Envelope layout (see SPEC.md): every encoded value is a msgpack array of
// exactly three elements,
//
//	[ tag: str, version: uint, body: type-specific ]
//
// A decoder checks the tag first (ErrTypeMismatch), then the version
// (ErrUnsupportedVersion), then decodes the body with bounded lengths
// (ErrCorruptEncoding, ErrTooLarge). Trailing bytes after the envelope are
// corrupt.
const EnvelopeLen = 3

// DefaultMaxEncodedSize is the largest input any decoder accepts unless a
// type documents a different bound: 16 MiB. A length prefix inside the input
// can never make a decoder allocate more than the input's own size.
const DefaultMaxEncodedSize = 16 << 20
