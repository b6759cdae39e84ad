package cassandratest

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// The CQL subset the double parses: the statements listed in doc.go. The
// parser builds a statement from tokens; cqlSyntax errors become the
// protocol's SyntaxError.

type tokKind int

const (
	tkEOF    tokKind = iota
	tkIdent          // unquoted: lower-cased
	tkQIdent         // "double-quoted": case kept
	tkString         // 'single-quoted'
	tkInt            // -?[0-9]+
	tkHex            // 0x...
	tkSym            // punctuation and operators
)

type token struct {
	kind tokKind
	s    string // identifier (lower-cased if unquoted), literal text, or symbol
	raw  string // as written
	pos  int
}

// cqlSyntax is a statement the parser refuses.
type cqlSyntax struct{ msg string }

func (e *cqlSyntax) Error() string { return e.msg }

func syntaxErr(t token, expecting string) error {
	in := t.raw
	if t.kind == tkEOF {
		in = "<EOF>"
	}
	if expecting == "" {
		return &cqlSyntax{fmt.Sprintf("line 1:%d no viable alternative at input '%s'", t.pos, in)}
	}
	return &cqlSyntax{fmt.Sprintf("line 1:%d mismatched input '%s' expecting %s", t.pos, in, expecting)}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func lex(q string) ([]token, error) {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '/' && i+1 < len(q) && q[i+1] == '/':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			continue
		case c == '0' && i+1 < len(q) && (q[i+1] == 'x' || q[i+1] == 'X'):
			i += 2
			for i < len(q) && (isDigit(q[i]) || isLetter(q[i])) {
				i++
			}
			out = append(out, token{kind: tkHex, s: strings.ToLower(q[start+2 : i]), raw: q[start:i], pos: start})
			continue
		case isDigit(c) || c == '-' && i+1 < len(q) && isDigit(q[i+1]) && negativeAllowed(out):
			i++
			for i < len(q) && isDigit(q[i]) {
				i++
			}
			out = append(out, token{kind: tkInt, s: q[start:i], raw: q[start:i], pos: start})
			continue
		case isLetter(c):
			for i < len(q) && (isLetter(q[i]) || isDigit(q[i]) || q[i] == '_') {
				i++
			}
			out = append(out, token{kind: tkIdent, s: strings.ToLower(q[start:i]), raw: q[start:i], pos: start})
			continue
		case c == '"' || c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(q) {
					return nil, &cqlSyntax{fmt.Sprintf("line 1:%d unterminated literal", start)}
				}
				if q[i] == c {
					if i+1 < len(q) && q[i+1] == c {
						b.WriteByte(c)
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(q[i])
				i++
			}
			k := tkString
			if c == '"' {
				k = tkQIdent
			}
			out = append(out, token{kind: k, s: b.String(), raw: q[start:i], pos: start})
			continue
		}
		if i+1 < len(q) && (q[i:i+2] == "<=" || q[i:i+2] == ">=" || q[i:i+2] == "!=") {
			out = append(out, token{kind: tkSym, s: q[i : i+2], raw: q[i : i+2], pos: i})
			i += 2
			continue
		}
		if !strings.ContainsRune("(),.;=<>?{}:+-*[]", rune(c)) {
			return nil, &cqlSyntax{fmt.Sprintf("line 1:%d token recognition error at: '%c'", i, c)}
		}
		out = append(out, token{kind: tkSym, s: string(c), raw: string(c), pos: i})
		i++
	}
	return append(out, token{kind: tkEOF, pos: len(q)}), nil
}

// negativeAllowed reports whether a '-' followed by a digit starts a
// negative number: not after an operand (c - 1 is a subtraction).
func negativeAllowed(prev []token) bool {
	if len(prev) == 0 {
		return true
	}
	t := prev[len(prev)-1]
	return t.kind == tkSym && t.s != ")" && t.s != "?"
}

// term is a value in a statement: a bind marker (marker >= 0, its index
// among the statement's markers) or a literal.
type term struct {
	marker int
	lit    token
}

type tableRef struct{ ks, name string }

type relation struct {
	col string
	op  string // =, <, <=, >, >=
	t   term
}

type selector struct {
	fn  string // "", "writetime" or "ttl"
	col string
}

// assignment is one SET of an UPDATE: col = t, or col = col + t (op "+")
// or col = col - t (op "-").
type assignment struct {
	col string
	op  string
	t   term
}

type colDef struct{ name, typ string }

type (
	selectStmt struct {
		table tableRef
		star  bool
		sel   []selector
		where []relation
		limit *term
	}
	insertStmt struct {
		table   tableRef
		cols    []string
		vals    []term
		ts, ttl *term
	}
	updateStmt struct {
		table   tableRef
		sets    []assignment
		where   []relation
		ts, ttl *term
	}
	deleteStmt struct {
		table tableRef
		where []relation
		ts    *term
	}
	createKeyspaceStmt struct {
		name        string
		ifNotExists bool
		replication map[string]string
	}
	createTableStmt struct {
		table       tableRef
		ifNotExists bool
		cols        []colDef
		pk, ck      []string
	}
	dropStmt struct {
		keyspace bool // DROP KEYSPACE, else DROP TABLE
		table    tableRef
		ifExists bool
	}
	useStmt struct{ ks string }
)

type parser struct {
	toks    []token
	i       int
	markers int
}

func parse(q string) (any, int, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, 0, err
	}
	p := &parser{toks: toks}
	st, err := p.statement()
	if err != nil {
		return nil, 0, err
	}
	p.sym(";")
	if t := p.peek(); t.kind != tkEOF {
		return nil, 0, syntaxErr(t, "")
	}
	return st, p.markers, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tkEOF {
		p.i++
	}
	return t
}

// kw consumes the keyword w (unquoted, any case) if it is next.
func (p *parser) kw(w string) bool {
	if t := p.peek(); t.kind == tkIdent && t.s == w {
		p.i++
		return true
	}
	return false
}

func (p *parser) sym(s string) bool {
	if t := p.peek(); t.kind == tkSym && t.s == s {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectKw(words ...string) error {
	for _, w := range words {
		if !p.kw(w) {
			return syntaxErr(p.peek(), strings.ToUpper(w))
		}
	}
	return nil
}

func (p *parser) expectSym(s string) error {
	if !p.sym(s) {
		return syntaxErr(p.peek(), "'"+s+"'")
	}
	return nil
}

func (p *parser) ident() (string, error) {
	t := p.peek()
	if t.kind != tkIdent && t.kind != tkQIdent {
		return "", syntaxErr(t, "IDENT")
	}
	p.i++
	return t.s, nil
}

func (p *parser) tableRef() (tableRef, error) {
	a, err := p.ident()
	if err != nil {
		return tableRef{}, err
	}
	if !p.sym(".") {
		return tableRef{name: a}, nil
	}
	b, err := p.ident()
	return tableRef{ks: a, name: b}, err
}

func (p *parser) term() (term, error) {
	t := p.peek()
	switch {
	case t.kind == tkSym && t.s == "?":
		p.i++
		p.markers++
		return term{marker: p.markers - 1}, nil
	case t.kind == tkString || t.kind == tkInt || t.kind == tkHex,
		t.kind == tkIdent && (t.s == "true" || t.s == "false" || t.s == "null"):
		p.i++
		if t.kind == tkHex {
			if _, err := hex.DecodeString(t.s); err != nil {
				return term{}, syntaxErr(t, "")
			}
		}
		return term{marker: -1, lit: t}, nil
	}
	return term{}, syntaxErr(t, "a value")
}

func (p *parser) statement() (any, error) {
	t := p.peek()
	switch {
	case p.kw("select"):
		return p.selectStmt()
	case p.kw("insert"):
		return p.insertStmt()
	case p.kw("update"):
		return p.updateStmt()
	case p.kw("delete"):
		return p.deleteStmt()
	case p.kw("create"):
		if p.kw("keyspace") {
			return p.createKeyspace()
		}
		if p.kw("table") || p.kw("columnfamily") {
			return p.createTable()
		}
	case p.kw("drop"):
		d := dropStmt{}
		switch {
		case p.kw("keyspace"):
			d.keyspace = true
		case p.kw("table"), p.kw("columnfamily"):
		default:
			return nil, syntaxErr(p.peek(), "")
		}
		if p.kw("if") {
			if err := p.expectKw("exists"); err != nil {
				return nil, err
			}
			d.ifExists = true
		}
		var err error
		if d.keyspace {
			d.table.ks, err = p.ident()
		} else {
			d.table, err = p.tableRef()
		}
		return d, err
	case p.kw("use"):
		ks, err := p.ident()
		return useStmt{ks: ks}, err
	}
	return nil, syntaxErr(t, "")
}

func (p *parser) where() ([]relation, error) {
	if !p.kw("where") {
		return nil, nil
	}
	var out []relation
	for {
		col, err := p.ident()
		if err != nil {
			return nil, err
		}
		op := p.next()
		switch {
		case op.kind == tkIdent && op.s == "in":
			return nil, &cqlInvalid{"the test double does not support IN restrictions"}
		case op.kind != tkSym || op.s != "=" && op.s != "<" && op.s != "<=" && op.s != ">" && op.s != ">=":
			return nil, syntaxErr(op, "")
		}
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		out = append(out, relation{col: col, op: op.s, t: t})
		if !p.kw("and") {
			return out, nil
		}
	}
}

// using parses USING TIMESTAMP t [AND TTL t] / USING TTL t [AND TIMESTAMP t].
func (p *parser) using() (ts, ttl *term, err error) {
	if !p.kw("using") {
		return nil, nil, nil
	}
	for {
		var dst **term
		switch {
		case p.kw("timestamp"):
			dst = &ts
		case p.kw("ttl"):
			dst = &ttl
		default:
			return nil, nil, syntaxErr(p.peek(), "TIMESTAMP or TTL")
		}
		t, err := p.term()
		if err != nil {
			return nil, nil, err
		}
		*dst = &t
		if !p.kw("and") {
			return ts, ttl, nil
		}
	}
}

func (p *parser) selectStmt() (any, error) {
	var s selectStmt
	if p.sym("*") {
		s.star = true
	} else {
		for {
			name, err := p.ident()
			if err != nil {
				return nil, err
			}
			sel := selector{col: name}
			if (name == "writetime" || name == "ttl") && p.sym("(") {
				if sel.col, err = p.ident(); err != nil {
					return nil, err
				}
				sel.fn = name
				if err := p.expectSym(")"); err != nil {
					return nil, err
				}
			}
			s.sel = append(s.sel, sel)
			if !p.sym(",") {
				break
			}
		}
	}
	if err := p.expectKw("from"); err != nil {
		return nil, err
	}
	var err error
	if s.table, err = p.tableRef(); err != nil {
		return nil, err
	}
	if s.where, err = p.where(); err != nil {
		return nil, err
	}
	if p.kw("limit") {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		s.limit = &t
	}
	if p.kw("allow") {
		if err := p.expectKw("filtering"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *parser) insertStmt() (any, error) {
	var s insertStmt
	if err := p.expectKw("into"); err != nil {
		return nil, err
	}
	var err error
	if s.table, err = p.tableRef(); err != nil {
		return nil, err
	}
	if err := p.expectSym("("); err != nil {
		return nil, err
	}
	for {
		c, err := p.ident()
		if err != nil {
			return nil, err
		}
		s.cols = append(s.cols, c)
		if !p.sym(",") {
			break
		}
	}
	if err := p.expectSym(")"); err != nil {
		return nil, err
	}
	if err := p.expectKw("values"); err != nil {
		return nil, err
	}
	if err := p.expectSym("("); err != nil {
		return nil, err
	}
	for {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		s.vals = append(s.vals, t)
		if !p.sym(",") {
			break
		}
	}
	if err := p.expectSym(")"); err != nil {
		return nil, err
	}
	if len(s.vals) != len(s.cols) {
		return nil, &cqlInvalid{"Unmatched column names/values"}
	}
	s.ts, s.ttl, err = p.using()
	return s, err
}

func (p *parser) updateStmt() (any, error) {
	var s updateStmt
	var err error
	if s.table, err = p.tableRef(); err != nil {
		return nil, err
	}
	if s.ts, s.ttl, err = p.using(); err != nil {
		return nil, err
	}
	if err := p.expectKw("set"); err != nil {
		return nil, err
	}
	for {
		col, err := p.ident()
		if err != nil {
			return nil, err
		}
		if err := p.expectSym("="); err != nil {
			return nil, err
		}
		a := assignment{col: col, op: "="}
		if t := p.peek(); (t.kind == tkIdent || t.kind == tkQIdent) && t.s == col {
			p.i++
			op := p.next()
			if op.kind != tkSym || op.s != "+" && op.s != "-" {
				return nil, syntaxErr(op, "'+' or '-'")
			}
			a.op = op.s
		}
		if a.t, err = p.term(); err != nil {
			return nil, err
		}
		s.sets = append(s.sets, a)
		if !p.sym(",") {
			break
		}
	}
	s.where, err = p.where()
	return s, err
}

func (p *parser) deleteStmt() (any, error) {
	var s deleteStmt
	if err := p.expectKw("from"); err != nil {
		return nil, syntaxErr(p.peek(), "FROM (the double deletes rows, not columns)")
	}
	var err error
	if s.table, err = p.tableRef(); err != nil {
		return nil, err
	}
	if p.kw("using") { // Cassandra's grammar: USING TIMESTAMP only
		if at := p.peek(); !p.kw("timestamp") {
			return nil, syntaxErr(at, "K_TIMESTAMP")
		}
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		s.ts = &t
	}
	s.where, err = p.where()
	return s, err
}

func (p *parser) ifNotExists() (bool, error) {
	if !p.kw("if") {
		return false, nil
	}
	return true, p.expectKw("not", "exists")
}

func (p *parser) createKeyspace() (any, error) {
	var s createKeyspaceStmt
	var err error
	if s.ifNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if s.name, err = p.ident(); err != nil {
		return nil, err
	}
	if err := p.expectKw("with"); err != nil {
		return nil, err
	}
	for {
		opt, err := p.ident()
		if err != nil {
			return nil, err
		}
		if err := p.expectSym("="); err != nil {
			return nil, err
		}
		switch opt {
		case "replication":
			if s.replication, err = p.stringMap(); err != nil {
				return nil, err
			}
		case "durable_writes":
			if !p.kw("true") && !p.kw("false") {
				return nil, syntaxErr(p.peek(), "a boolean")
			}
		default:
			return nil, &cqlSyntax{fmt.Sprintf("Unknown property '%s'", opt)}
		}
		if !p.kw("and") {
			return s, nil
		}
	}
}

// stringMap parses {'k': 'v' | n, ...}.
func (p *parser) stringMap() (map[string]string, error) {
	if err := p.expectSym("{"); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for !p.sym("}") {
		if len(m) > 0 {
			if err := p.expectSym(","); err != nil {
				return nil, err
			}
		}
		k := p.next()
		if k.kind != tkString {
			return nil, syntaxErr(k, "a string")
		}
		if err := p.expectSym(":"); err != nil {
			return nil, err
		}
		v := p.next()
		if v.kind != tkString && v.kind != tkInt {
			return nil, syntaxErr(v, "a string")
		}
		m[k.s] = v.s
	}
	return m, nil
}

func (p *parser) createTable() (any, error) {
	var s createTableStmt
	var err error
	if s.ifNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if s.table, err = p.tableRef(); err != nil {
		return nil, err
	}
	if err := p.expectSym("("); err != nil {
		return nil, err
	}
	for {
		if p.kw("primary") {
			if err := p.expectKw("key"); err != nil {
				return nil, err
			}
			if s.pk, s.ck, err = p.primaryKey(); err != nil {
				return nil, err
			}
		} else {
			var c colDef
			if c.name, err = p.ident(); err != nil {
				return nil, err
			}
			t := p.next()
			if t.kind != tkIdent {
				return nil, syntaxErr(t, "a type")
			}
			c.typ = t.s
			if t := p.peek(); t.kind == tkSym && t.s == "<" {
				return nil, &cqlInvalid{fmt.Sprintf("the test double does not support the type of column %s", c.name)}
			}
			if p.kw("primary") {
				if err := p.expectKw("key"); err != nil {
					return nil, err
				}
				s.pk = append(s.pk, c.name)
			}
			s.cols = append(s.cols, c)
		}
		if !p.sym(",") {
			break
		}
	}
	if err := p.expectSym(")"); err != nil {
		return nil, err
	}
	if p.kw("with") {
		return nil, &cqlInvalid{"the test double does not support table options (WITH)"}
	}
	return s, nil
}

// primaryKey parses ((a, b), c, d) or (a, c, d).
func (p *parser) primaryKey() (pk, ck []string, err error) {
	if err := p.expectSym("("); err != nil {
		return nil, nil, err
	}
	list := func() ([]string, error) {
		var out []string
		for {
			c, err := p.ident()
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			if !p.sym(",") {
				return out, nil
			}
		}
	}
	if p.sym("(") {
		if pk, err = list(); err != nil {
			return nil, nil, err
		}
		if err := p.expectSym(")"); err != nil {
			return nil, nil, err
		}
		if p.sym(",") {
			if ck, err = list(); err != nil {
				return nil, nil, err
			}
		}
	} else {
		all, err := list()
		if err != nil {
			return nil, nil, err
		}
		pk, ck = all[:1], all[1:]
	}
	return pk, ck, p.expectSym(")")
}
