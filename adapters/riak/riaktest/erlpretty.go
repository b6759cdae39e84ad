package riaktest

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file prints Erlang terms as io_lib:format's ~p does (io_lib_pretty,
// OTP 25, with no depth or character limit and Riak's default latin1
// printing), for the terms Riak's refusals hold: atoms, strings, integers,
// lists and tuples. Riak formats its bucket-property refusal with
// io_lib:format("Invalid bucket properties: ~p", [Errors]), so a list that
// does not fit in 80 columns after that 27-character prefix is broken over
// several lines, continuation lines indented under its first element, and
// a tuple that does not fit is broken after its tag. Each function below
// is the io_lib_pretty function of the same name (pp, pp_tag_tuple,
// pp_list, pp_tail, pp_element, cind, ...), with the same arithmetic.

// pterm is a term in io_lib_pretty's intermediate form: an atomic term
// with its printed text, or a list or tuple of terms, each with its
// length printed on one line (print_length).
type pterm struct {
	text  string // an atomic term: atom, string, integer, [] or {}
	list  bool
	tuple bool
	atom  bool // an atom: a tuple led by one is "tagged"
	elems []*pterm
	n     int // the length on one line, in characters
}

// pAtom is an atom, printed as ~p prints it.
func pAtom(name string) *pterm {
	t := erlAtom(name)
	return &pterm{text: t, atom: true, n: utf8.RuneCountInString(t)}
}

// pInt is an integer.
func pInt(i int) *pterm {
	t := strconv.Itoa(i)
	return &pterm{text: t, n: len(t)}
}

// pString is the Erlang string (list of characters) s, one character per
// rune. ~p prints it in double quotes when every character is printable
// latin1 (io_lib:printable_latin1_list), and otherwise as the list of its
// character codes; the empty string is [].
func pString(s string) *pterm {
	if s == "" {
		return &pterm{text: "[]", n: 2}
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= ' ' && r <= '~' || r >= 0xa0 && r <= 0xff:
			b.WriteRune(r)
		case strings.ContainsRune("\n\r\t\v\b\f\x1b", r):
			b.WriteByte('\\')
			b.WriteByte("nrtvbfe"[strings.IndexRune("\n\r\t\v\b\f\x1b", r)])
		default:
			codes := make([]*pterm, 0, len(s))
			for _, r := range s {
				codes = append(codes, pInt(int(r)))
			}
			return pList(codes...)
		}
	}
	b.WriteByte('"')
	t := b.String()
	return &pterm{text: t, n: utf8.RuneCountInString(t)}
}

// pList is the list of elems.
func pList(elems ...*pterm) *pterm {
	if len(elems) == 0 {
		return &pterm{text: "[]", n: 2}
	}
	return &pterm{list: true, elems: elems, n: 2 + joinedLen(elems)}
}

// pTuple is the tuple of elems.
func pTuple(elems ...*pterm) *pterm {
	if len(elems) == 0 {
		return &pterm{text: "{}", n: 2}
	}
	return &pterm{tuple: true, elems: elems, n: 2 + joinedLen(elems)}
}

func joinedLen(elems []*pterm) int {
	n := len(elems) - 1 // the commas
	for _, e := range elems {
		n += e.n
	}
	return n
}

// atomic reports io_lib_pretty's ?ATM: a term printed as one piece.
func (t *pterm) atomic() bool { return !t.list && !t.tuple }

// tagged reports a tuple of two or more elements whose first is an atom.
func (t *pterm) tagged() bool { return t.tuple && len(t.elems) > 1 && t.elems[0].atom }

// write prints t on one line.
func (t *pterm) write(b *strings.Builder) {
	if t.atomic() {
		b.WriteString(t.text)
		return
	}
	open, close := byte('{'), byte('}')
	if t.list {
		open, close = '[', ']'
	}
	b.WriteByte(open)
	for i, e := range t.elems {
		if i > 0 {
			b.WriteByte(',')
		}
		e.write(b)
	}
	b.WriteByte(close)
}

// erlPrint returns t as ~p prints it starting at column col (1-based: the
// characters before it on the line, plus one) with line length 80.
func erlPrint(t *pterm, col int) string {
	var b strings.Builder
	if t.atom {
		b.WriteString(t.text)
		return b.String()
	}
	// io_lib_pretty:print/10: no character limit, so the maximum line
	// width M is the term's own length.
	p := &pretty{ll: 80, m: t.n, b: &b}
	if t.n < p.ll-col && t.n <= p.m {
		t.write(&b)
		return b.String()
	}
	// The indentation of tagged tuples' elements: none (-1) if that fits,
	// else 4, else 1 (while_fail([-1, 4], cind, 1)).
	tind := 1
	for _, i := range []int{-1, 4} {
		if p.cind(t, col, i, 0, 0) {
			tind = i
			break
		}
	}
	p.pp(t, col, tind, col-1, 0, 0)
	return b.String()
}

// pretty holds io_lib_pretty's line length (Ll) and maximum width (M), and
// the output.
type pretty struct {
	ll, m int
	b     *strings.Builder
}

// lastDepth is last_depth: 0 before the last element, else ld+1 (the
// closing brackets that follow the last one).
func lastDepth(rest []*pterm, ld int) int {
	if len(rest) > 0 {
		return 0
	}
	return ld + 1
}

// fitsTail is the guard of pp_tail and cind_tail under which the next
// element e is written on the current line, after a comma.
func (p *pretty) fitsTail(e *pterm, ld1, col, w int) bool {
	elen := 1 + e.n
	if !e.atomic() {
		return false
	}
	if ld1 == 0 {
		return elen+1 < p.ll-col && w+elen+1 <= p.m
	}
	return elen < p.ll-col-ld1 && w+elen+ld1 <= p.m
}

func (p *pretty) pp(t *pterm, col, tind, ind, ld, w int) {
	switch {
	case t.n < p.ll-col-ld && t.n+w+ld <= p.m:
		t.write(p.b)
	case t.list:
		p.b.WriteByte('[')
		p.ppList(t.elems, col+1, tind, ind+1, ld, w+1)
		p.b.WriteByte(']')
	case t.tagged():
		p.b.WriteByte('{')
		p.ppTagTuple(t.elems, col, tind, ind, ld, w+1)
		p.b.WriteByte('}')
	case t.tuple:
		p.b.WriteByte('{')
		p.ppList(t.elems, col+1, tind, ind+1, ld, w+1)
		p.b.WriteByte('}')
	default:
		p.b.WriteString(t.text)
	}
}

func (p *pretty) ppTagTuple(elems []*pterm, col, tind, ind, ld, w int) {
	tag, rest := elems[0], elems[1:]
	tagInd := tag.n + 2
	tcol := col + tagInd
	p.b.WriteString(tag.text)
	if tind > 0 && tagInd > tind {
		p.ppTail(rest, col+tind, tcol, tind, ind+tind, ld, w+tag.n)
		return
	}
	p.b.WriteByte(',')
	p.ppList(rest, tcol, tind, ind+tagInd, ld, w+tag.n+1)
}

func (p *pretty) ppList(elems []*pterm, col0, tind, ind, ld, w int) {
	rest := elems[1:]
	we := p.ppElement(elems[0], col0, tind, ind, lastDepth(rest, ld), w)
	p.ppTail(rest, col0, col0+we, tind, ind, ld, w+we)
}

func (p *pretty) ppTail(elems []*pterm, col0, col, tind, ind, ld, w int) {
	for i, e := range elems {
		ld1 := lastDepth(elems[i+1:], ld)
		if p.fitsTail(e, ld1, col, w) {
			p.b.WriteByte(',')
			e.write(p.b)
			col += 1 + e.n
			w += 1 + e.n
			continue
		}
		p.b.WriteString(",\n")
		p.b.WriteString(strings.Repeat(" ", ind))
		we := p.ppElement(e, col0, tind, ind, ld1, 0)
		col, w = col0+we, we
	}
}

// ppElement prints e and returns its width, or the line length when it
// took more than one line (which forces a new line before the next).
func (p *pretty) ppElement(e *pterm, col, tind, ind, ld, w int) int {
	if e.n < p.ll-col-ld && e.n+w+ld <= p.m && e.atomic() {
		e.write(p.b)
		return e.n
	}
	p.pp(e, col, tind, ind, ld, w)
	return p.ll
}

// cind reports whether printing t with tagged-tuple indentation ind keeps
// within io_lib_pretty's bounds (it throws no_good where this returns
// false).
func (p *pretty) cind(t *pterm, col, ind, ld, w int) bool {
	switch {
	case t.n < p.ll-col-ld && t.n+w+ld <= p.m:
		return true
	case t.list:
		return p.cindList(t.elems, col+1, ind, ld, w+1)
	case t.tagged():
		return p.cindTagTuple(t.elems, col, ind, ld, w+1)
	case t.tuple:
		return p.cindList(t.elems, col+1, ind, ld, w+1)
	}
	return true
}

func (p *pretty) cindTagTuple(elems []*pterm, col, ind, ld, w int) bool {
	tlen := elems[0].n
	tagInd := tlen + 2
	tcol := col + tagInd
	switch {
	case ind > 0 && tagInd > ind:
		col1 := col + ind
		if p.m+col1 <= p.ll || col1 <= p.ll/2 {
			return p.cindTail(elems[1:], col1, tcol, ind, ld, w+tlen)
		}
		return false
	case p.m+tcol < p.ll || tcol < p.ll/2:
		return p.cindList(elems[1:], tcol, ind, ld, w+tlen+1)
	}
	return false
}

func (p *pretty) cindList(elems []*pterm, col0, ind, ld, w int) bool {
	rest := elems[1:]
	we, ok := p.cindElement(elems[0], col0, ind, lastDepth(rest, ld), w)
	return ok && p.cindTail(rest, col0, col0+we, ind, ld, w+we)
}

func (p *pretty) cindTail(elems []*pterm, col0, col, ind, ld, w int) bool {
	for i, e := range elems {
		ld1 := lastDepth(elems[i+1:], ld)
		if p.fitsTail(e, ld1, col, w) {
			col += 1 + e.n
			w += 1 + e.n
			continue
		}
		we, ok := p.cindElement(e, col0, ind, ld1, 0)
		if !ok {
			return false
		}
		col, w = col0+we, we
	}
	return true
}

func (p *pretty) cindElement(e *pterm, col, ind, ld, w int) (int, bool) {
	if e.n < p.ll-col-ld && e.n+w+ld <= p.m && e.atomic() {
		return e.n, true
	}
	return p.ll, p.cind(e, col, ind, ld, w)
}
