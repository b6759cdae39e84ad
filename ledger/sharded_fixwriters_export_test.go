package ledger

import "github.com/counterkit/counterkit/crdt"

// FixShardWriters gives each sub-ledger of s the incarnation actor~tag
// followed by the sub-key's letter, so that a schedule replays exactly
// (incarnations are random otherwise). It does no I/O.
func FixShardWriters(s *Sharded, tag string) {
	for i := range s.subs {
		l := s.sub(i)
		l.setWriter(s.opts.Actor+"~"+crdt.ActorID(tag)+crdt.ActorID(rune('a'+i)), l.own)
	}
}
