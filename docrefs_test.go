package counterkit_test

// Checks that the Go identifiers the documentation names exist: the doc
// comments of every package in the repository (sub-modules included) and
// the Markdown files README.md, SPEC.md and each package's README.md. The
// packages are read with go/parser, not built, so the sub-modules need no
// download; standard-library names are read from GOROOT the same way.
//
// What counts as a reference, so that prose never trips the check:
//   - pkg.Name and pkg.Type.Member, where pkg is the name of a repository
//     package, a package the Go file imports, or a standard-library package
//     (an unknown qualifier, such as a variable in an example, is ignored);
//   - Type.Member, where Type is a type of the documented package;
//   - doc links [Name], [Type.Member], [pkg.Name], [pkg.Type.Member];
//   - fields in composite literals: pkg.Options{Field: ...};
//   - in Markdown, test function names (TestX, BenchmarkX, FuzzX,
//     ExampleX), which some package of the repository must declare.
//
// Members are methods, struct fields (promoted ones too) and interface
// methods. Only exported names are checked. A bare word (Faulty) is not
// checked: it cannot be told from prose, nor from a third-party name.

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/internal/testsize"
)

// docFinding is one name the documentation gives that does not exist.
type docFinding struct {
	File string // slash path relative to the repository root
	Line int
	Ref  string // the name as written
	Why  string
}

func (f docFinding) key() string { return f.File + " " + f.Ref }

func (f docFinding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Ref, f.Why)
}

// knownDocDrift lists the findings the check skips, by file and name as
// written; each value is the name that exists instead. The test fails when
// an entry no longer occurs, so an entry goes with the fix of its document.
// Empty this list; do not add to it.
var knownDocDrift = map[string]string{}

// symType is what a package declares for one type.
type symType struct {
	members map[string]bool
	embeds  []symRef // embedded types, whose members are promoted
}

// symRef names a type: pkg is an import path ("" for the declaring package).
type symRef struct{ pkg, name string }

// symPkg is what one package (all its files, tests included) declares.
type symPkg struct {
	dir, path, name string
	decls           map[string]bool // package-level names
	types           map[string]*symType
}

// docIndex resolves names against the repository's packages and GOROOT.
type docIndex struct {
	root    string
	modules map[string]string // module path -> directory, slash, relative to root
	byPath  map[string]*symPkg
	byName  map[string][]*symPkg // repository packages by name (no "main")
	std     map[string][]string  // standard-library package name -> import paths
	checked int                  // references resolved and checked
	tests   map[string]bool      // test, benchmark, fuzz and example functions
	files   []*docFile
}

// docFile is one parsed Go file, whose doc comments are checked.
type docFile struct {
	rel     string
	pkg     *symPkg
	fset    *token.FileSet
	ast     *ast.File
	imports map[string]string // name -> import path
}

func newDocIndex(root string) (*docIndex, error) {
	ix := &docIndex{
		root:    root,
		modules: map[string]string{},
		byPath:  map[string]*symPkg{},
		byName:  map[string][]*symPkg{},
		tests:   map[string]bool{},
	}
	dirs := map[string][]string{} // relative dir -> .go files
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case name == "go.mod":
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if m := moduleRe.FindSubmatch(data); m != nil {
				ix.modules[string(m[1])] = path.Dir(rel)
			}
		case strings.HasSuffix(name, ".go"):
			dirs[path.Dir(rel)] = append(dirs[path.Dir(rel)], name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for dir, names := range dirs {
		p := &symPkg{dir: dir, decls: map[string]bool{}, types: map[string]*symType{}}
		p.path = ix.importPath(dir)
		fset := token.NewFileSet()
		for _, n := range names {
			f, err := parser.ParseFile(fset, filepath.Join(root, dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			imports := fileImports(f)
			collectDecls(p, f, imports, false)
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && testFuncRe.MatchString(fd.Name.Name) {
					ix.tests[fd.Name.Name] = true
				}
			}
			if !strings.HasSuffix(f.Name.Name, "_test") {
				p.name = f.Name.Name
			}
			ix.files = append(ix.files, &docFile{rel: path.Join(dir, n), pkg: p, fset: fset, ast: f, imports: imports})
		}
		ix.byPath[p.path] = p
		if p.name != "" && p.name != "main" {
			ix.byName[p.name] = append(ix.byName[p.name], p)
		}
	}
	sort.Slice(ix.files, func(i, j int) bool { return ix.files[i].rel < ix.files[j].rel })
	return ix, nil
}

// importPath maps a repository directory to its import path through the
// nearest enclosing go.mod.
func (ix *docIndex) importPath(dir string) string {
	best, bestDir := "", ""
	for mod, mdir := range ix.modules {
		encloses := mdir == "." || dir == mdir || strings.HasPrefix(dir, mdir+"/")
		if encloses && (best == "" || len(mdir) > len(bestDir)) {
			best, bestDir = mod, mdir
		}
	}
	if best == "" {
		return dir
	}
	if dir == bestDir {
		return best
	}
	if bestDir == "." {
		return best + "/" + dir
	}
	return best + strings.TrimPrefix(dir, bestDir)
}

func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, s := range f.Imports {
		p := strings.Trim(s.Path.Value, `"`)
		name := path.Base(p)
		if majorRe.MatchString(name) && path.Dir(p) != "." {
			name = path.Base(path.Dir(p))
		}
		if s.Name != nil {
			name = s.Name.Name
		}
		if name != "_" && name != "." {
			m[name] = p
		}
	}
	return m
}

// collectDecls adds f's package-level names, types, methods and fields to p.
func collectDecls(p *symPkg, f *ast.File, imports map[string]string, exportedOnly bool) {
	typ := func(name string) *symType {
		t := p.types[name]
		if t == nil {
			t = &symType{members: map[string]bool{}}
			p.types[name] = t
		}
		return t
	}
	keep := func(name string) bool { return !exportedOnly || ast.IsExported(name) }
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				if keep(d.Name.Name) {
					p.decls[d.Name.Name] = true
				}
				continue
			}
			if r := recvName(d.Recv.List[0].Type); r != "" && keep(d.Name.Name) {
				typ(r).members[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if keep(n.Name) {
							p.decls[n.Name] = true
						}
					}
				case *ast.TypeSpec:
					if !keep(s.Name.Name) {
						continue
					}
					p.decls[s.Name.Name] = true
					t := typ(s.Name.Name)
					var fields *ast.FieldList
					switch u := s.Type.(type) {
					case *ast.StructType:
						fields = u.Fields
					case *ast.InterfaceType:
						fields = u.Methods
					default:
						// A defined type or alias keeps the fields (and,
						// for an alias or interface, the methods) of the
						// type it names: treat that as embedded.
						if r, ok := typeRef(s.Type, imports); ok {
							t.embeds = append(t.embeds, r)
						}
					}
					if fields == nil {
						continue
					}
					for _, fl := range fields.List {
						if len(fl.Names) == 0 {
							if r, ok := typeRef(fl.Type, imports); ok {
								t.members[r.name] = true
								t.embeds = append(t.embeds, r)
							} else {
								t.embeds = append(t.embeds, symRef{pkg: "?"})
							}
						}
						for _, n := range fl.Names {
							t.members[n.Name] = true
						}
					}
				}
			}
		}
	}
}

func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func typeRef(e ast.Expr, imports map[string]string) (symRef, bool) {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return symRef{name: x.Name}, true
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				if p, ok := imports[id.Name]; ok {
					return symRef{pkg: p, name: x.Sel.Name}, true
				}
			}
			return symRef{}, false
		default:
			return symRef{}, false
		}
	}
}

// pkg returns the package of an import path: a repository package, a
// standard-library package read from GOROOT, or nil (a third-party one).
func (ix *docIndex) pkg(importPath string) *symPkg {
	if p, ok := ix.byPath[importPath]; ok {
		return p
	}
	if strings.Contains(strings.Split(importPath, "/")[0], ".") {
		ix.byPath[importPath] = nil
		return nil
	}
	bp, err := build.Default.Import(importPath, "", 0)
	if err != nil || !bp.Goroot {
		ix.byPath[importPath] = nil
		return nil
	}
	p := &symPkg{dir: bp.Dir, path: importPath, name: bp.Name, decls: map[string]bool{}, types: map[string]*symType{}}
	fset := token.NewFileSet()
	for _, n := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(bp.Dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		collectDecls(p, f, fileImports(f), true)
	}
	ix.byPath[importPath] = p
	return p
}

// stdByName returns the standard-library import paths whose package has
// the given name.
func (ix *docIndex) stdByName(name string) []string {
	if ix.std == nil {
		ix.std = map[string][]string{}
		src := filepath.Join(build.Default.GOROOT, "src")
		_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			switch d.Name() {
			case "testdata", "internal", "vendor", "cmd":
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(src, p)
			if rel == "." {
				return nil
			}
			rel = filepath.ToSlash(rel)
			n := path.Base(rel)
			if majorRe.MatchString(n) {
				n = path.Base(path.Dir(rel))
			}
			ix.std[n] = append(ix.std[n], rel)
			return nil
		})
	}
	return ix.std[name]
}

// docScope is where a text is read: the package it documents (nil for a
// repository-wide document) and the imports of its Go file.
type docScope struct {
	self    *symPkg
	imports map[string]string
	wide    bool // a repository-wide document: Type.Member may be any package's
}

// qualifier returns the packages a lowercase qualifier may name, and false
// when it names none this check knows (a variable, a third-party package).
func (ix *docIndex) qualifier(sc docScope, q string) ([]*symPkg, bool) {
	if sc.self != nil && q == sc.self.name {
		return []*symPkg{sc.self}, true
	}
	if p, ok := sc.imports[q]; ok {
		if pk := ix.pkg(p); pk != nil {
			return []*symPkg{pk}, true
		}
		return nil, false
	}
	if ps := ix.byName[q]; len(ps) > 0 {
		return ps, true
	}
	var ps []*symPkg
	for _, p := range ix.stdByName(q) {
		if pk := ix.pkg(p); pk != nil {
			ps = append(ps, pk)
		}
	}
	return ps, len(ps) > 0
}

// hasMember reports whether type name of package p has the member m,
// following embedded types; an embedded type it cannot read accepts any m.
func (ix *docIndex) hasMember(p *symPkg, name, m string, depth int) bool {
	t := p.types[name]
	if t == nil || depth > 8 {
		return false
	}
	if t.members[m] {
		return true
	}
	for _, e := range t.embeds {
		if e.pkg == "?" {
			return true
		}
		q := p
		if e.pkg != "" {
			if q = ix.pkg(e.pkg); q == nil {
				return true
			}
		}
		if _, ok := q.types[e.name]; !ok && q.decls[e.name] {
			return true // a type this check cannot read (e.g. an alias in a build-tagged file)
		}
		if ix.hasMember(q, e.name, m, depth+1) {
			return true
		}
	}
	return false
}

// checkRef checks one dotted name; parts has two or three elements.
func (ix *docIndex) checkRef(sc docScope, parts []string) (string, bool) {
	if len(parts) < 2 || !ast.IsExported(parts[1]) {
		return "", true
	}
	if !ast.IsExported(parts[0]) {
		ps, ok := ix.qualifier(sc, parts[0])
		if !ok {
			return "", true
		}
		ix.checked++
		for _, p := range ps {
			if p.decls[parts[1]] {
				if len(parts) < 3 || !ast.IsExported(parts[2]) || p.types[parts[1]] == nil || ix.hasMember(p, parts[1], parts[2], 0) {
					return "", true
				}
				return fmt.Sprintf("type %s.%s has no method or field %s", p.name, parts[1], parts[2]), false
			}
		}
		return fmt.Sprintf("package %s (%s) declares no %s", parts[0], ps[0].path, parts[1]), false
	}
	var owners []*symPkg
	if sc.self != nil && sc.self.types[parts[0]] != nil {
		owners = []*symPkg{sc.self}
	} else if sc.wide {
		for _, p := range ix.repo() {
			if p.types[parts[0]] != nil && p.decls[parts[0]] {
				owners = append(owners, p)
			}
		}
	}
	if len(owners) == 0 {
		return "", true
	}
	ix.checked++
	var names []string
	for _, p := range owners {
		if ix.hasMember(p, parts[0], parts[1], 0) {
			return "", true
		}
		names = append(names, p.name+"."+parts[0])
	}
	return fmt.Sprintf("no method or field %s in %s", parts[1], strings.Join(names, ", ")), false
}

// repo returns the repository's packages (main packages included), sorted
// by directory.
func (ix *docIndex) repo() []*symPkg {
	var ps []*symPkg
	for _, p := range ix.byPath {
		if p != nil && !filepath.IsAbs(p.dir) {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].dir < ps[j].dir })
	return ps
}

var (
	majorRe   = regexp.MustCompile(`^v[0-9]+$`)
	moduleRe  = regexp.MustCompile(`(?m)^module\s+(\S+)`)
	dottedRe  = regexp.MustCompile(`\*?\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){1,2}`)
	docLinkRe = regexp.MustCompile(`\[\*?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2})\]`)
	linkDefRe = regexp.MustCompile(`(?m)^\s*(?://)?\s*\[([^\]]+)\]:\s*\S`)
)

// dottedRefs returns the dotted names in s with their byte offsets; a name
// that continues a path (a/b.c), a longer chain or a file name is left out.
func dottedRefs(s string) (refs [][]string, offs []int) {
	for _, loc := range dottedRe.FindAllStringIndex(s, -1) {
		start, end := loc[0], loc[1]
		if s[start] == '*' {
			start++
		}
		if start > 0 && strings.ContainsRune("/.-_$@:", rune(s[start-1])) {
			continue
		}
		if end < len(s) && (s[end] == '.' && end+1 < len(s) && (isIdentByte(s[end+1])) || s[end] == '/' || s[end] == '-') {
			continue
		}
		refs = append(refs, strings.Split(s[start:end], "."))
		offs = append(offs, start)
	}
	return refs, offs
}

var literalRe = regexp.MustCompile(`\b(?:([a-z][A-Za-z0-9_]*)\.)?([A-Z][A-Za-z0-9_]*)\{`)

// literalRefs returns the fields named in composite literals in s, as
// pkg.Type.Field or Type.Field with the literal's byte offset:
// riak.Options{Bucket: "b", RetryCount: 3} names Options.Bucket and
// Options.RetryCount of package riak.
func literalRefs(s string) (refs [][]string, offs []int) {
	for _, m := range literalRe.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 && strings.ContainsRune("/.-_$@", rune(s[m[0]-1])) {
			continue
		}
		// The literal's elements at depth one, up to its closing brace.
		depth, quoted, body := 1, byte(0), []byte{}
		for i := m[1]; i < len(s) && depth > 0; i++ {
			c := s[i]
			switch {
			case quoted != 0:
				if c == quoted {
					quoted = 0
				}
				continue
			case c == '"' || c == '`' || c == '\'':
				quoted = c
				continue
			case c == '{' || c == '(' || c == '[':
				depth++
			case c == '}' || c == ')' || c == ']':
				depth--
			}
			if depth == 1 {
				body = append(body, c)
			}
		}
		if depth != 0 {
			continue
		}
		for _, f := range literalKeyRe.FindAllStringSubmatch(string(body), -1) {
			ref := []string{s[m[4]:m[5]], f[1]}
			if m[2] >= 0 {
				ref = append([]string{s[m[2]:m[3]]}, ref...)
			}
			refs = append(refs, ref)
			offs = append(offs, m[0])
		}
	}
	return refs, offs
}

// testFuncRe matches the name of a test, benchmark, fuzz test or example.
var testFuncRe = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz|Example)[A-Z_][A-Za-z0-9_]*`)

var literalKeyRe = regexp.MustCompile(`(?:^|,)\s*([A-Z][A-Za-z0-9_]*)\s*:`)

func isIdentByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// checkComment checks one doc comment's text, as written in the file
// (comment markers included); line is the line of its first byte.
func (ix *docIndex) checkComment(rel string, line int, sc docScope, text string) []docFinding {
	var out []docFinding
	lineAt := func(off int) int { return line + strings.Count(text[:off], "\n") }
	add := func(off int, ref, why string) {
		out = append(out, docFinding{File: rel, Line: lineAt(off), Ref: ref, Why: why})
	}
	refs, offs := dottedRefs(text)
	lrefs, loffs := literalRefs(text)
	refs, offs = append(refs, lrefs...), append(offs, loffs...)
	for i, parts := range refs {
		if why, ok := ix.checkRef(sc, parts); !ok {
			add(offs[i], strings.Join(parts, "."), why)
		}
	}
	defined := map[string]bool{}
	for _, m := range linkDefRe.FindAllStringSubmatch(text, -1) {
		defined[m[1]] = true
	}
	for _, m := range docLinkRe.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		if defined[name] || m[0] > 0 && isIdentByte(text[m[0]-1]) || m[1] < len(text) && strings.ContainsRune("(:[", rune(text[m[1]])) {
			continue
		}
		parts := strings.Split(name, ".")
		if len(parts) > 1 {
			continue // checked as a dotted name above
		}
		if !ast.IsExported(name) || strings.ToUpper(name) == name {
			continue // [pkg]: a package link; [DIR]: a placeholder
		}
		if sc.self == nil {
			continue
		}
		ix.checked++
		if !sc.self.decls[name] {
			add(m[0], "["+name+"]", fmt.Sprintf("package %s declares no %s", sc.self.name, name))
		}
	}
	return out
}

// checkGo checks the doc comments of every Go file, tests included.
func (ix *docIndex) checkGo() []docFinding {
	var out []docFinding
	for _, f := range ix.files {
		sc := docScope{self: f.pkg, imports: f.imports}
		for _, cg := range docComments(f.ast) {
			for _, c := range cg.List {
				out = append(out, ix.checkComment(f.rel, f.fset.Position(c.Slash).Line, sc, c.Text)...)
			}
		}
	}
	return out
}

// docComments returns the doc comments of a file: the package's, and those
// of its declarations, struct fields and interface methods.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	if f.Doc != nil {
		out = append(out, f.Doc)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var d *ast.CommentGroup
		switch n := n.(type) {
		case *ast.FuncDecl:
			d = n.Doc
		case *ast.GenDecl:
			d = n.Doc
		case *ast.TypeSpec:
			d = n.Doc
		case *ast.ValueSpec:
			d = n.Doc
		case *ast.Field:
			d = n.Doc
		case *ast.BlockStmt:
			return false
		}
		if d != nil {
			out = append(out, d)
		}
		return true
	})
	return out
}

// checkMarkdown checks a Markdown file: the dotted names in its prose and
// code (inline spans and fenced Go blocks), and, in a package's README,
// each exported name alone in a code span.
func (ix *docIndex) checkMarkdown(rel string, data []byte) []docFinding {
	sc := docScope{wide: path.Dir(rel) == "."}
	if p := ix.byPath[ix.importPath(path.Dir(rel))]; p != nil {
		sc.self = p
	}
	var out []docFinding
	fence, fenceGo := false, false
	sn := bufio.NewScanner(bytes.NewReader(data))
	sn.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sn.Scan(); line++ {
		text := sn.Text()
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "```") {
			if !fence {
				fenceGo = strings.TrimPrefix(t, "```") == "go"
			}
			fence = !fence
			continue
		}
		add := func(ref, why string) {
			out = append(out, docFinding{File: rel, Line: line, Ref: ref, Why: why})
		}
		// Test names, in prose, code spans and commands (go test -run);
		// <TestName> is a placeholder, func TestX a user's own test.
		for _, m := range testFuncRe.FindAllStringIndex(text, -1) {
			if m[0] > 0 && (strings.ContainsRune(".<", rune(text[m[0]-1])) || isIdentByte(text[m[0]-1])) || strings.HasSuffix(text[:m[0]], "func ") {
				continue
			}
			ix.checked++
			if name := text[m[0]:m[1]]; !ix.tests[name] {
				add(name, "no package in the repository declares the test function "+name)
			}
		}
		if fence && !fenceGo {
			continue
		}
		refs, _ := dottedRefs(text)
		lrefs, _ := literalRefs(text)
		for _, parts := range append(refs, lrefs...) {
			if why, ok := ix.checkRef(sc, parts); !ok {
				add(strings.Join(parts, "."), why)
			}
		}
	}
	return out
}

// checkAll checks every Go file's doc comments and the Markdown files.
func (ix *docIndex) checkAll() ([]docFinding, error) {
	out := ix.checkGo()
	mds := []string{"README.md", "SPEC.md"}
	for _, p := range ix.byPath {
		if p != nil && p.name != "" && !filepath.IsAbs(p.dir) && p.dir != "." {
			mds = append(mds, path.Join(p.dir, "README.md"))
		}
	}
	sort.Strings(mds)
	for _, md := range mds {
		data, err := os.ReadFile(filepath.Join(ix.root, md))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ix.checkMarkdown(md, data)...)
	}
	return out, nil
}

func TestDocsNameExistingIdentifiers(t *testing.T) {
	testsize.SkipSequential(t)
	ix, err := newDocIndex(".")
	if err != nil {
		t.Fatal(err)
	}
	findings, err := ix.checkAll()
	if err != nil {
		t.Fatal(err)
	}
	// A floor on the references resolved, so that a checker that silently
	// stops reading (a walk that skips everything) fails here.
	if ix.checked < 1000 {
		t.Errorf("checked %d references in %d Go files; want at least 1000", ix.checked, len(ix.files))
	}
	t.Logf("checked %d references in %d Go files and the Markdown files; %d findings, %d of them known", ix.checked, len(ix.files), len(findings), len(knownDocDrift))
	seen := map[string]bool{}
	for _, f := range findings {
		seen[f.key()] = true
		if _, known := knownDocDrift[f.key()]; known {
			continue
		}
		t.Errorf("%v", f)
	}
	for k := range knownDocDrift {
		if !seen[k] {
			t.Errorf("knownDocDrift: %q no longer occurs; remove its entry", k)
		}
	}
}

// TestDocCheckerCatchesMissingNames runs the checker on a small repository
// whose documents name missing identifiers among existing ones, and
// requires exactly the missing ones.
func TestDocCheckerCatchesMissingNames(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/x\n",
		"a/a.go": `// Package a names b.Missing, [Gone], Options.Nope, [b.Thing.Nope]
// and errors.Nope, next to names that exist: b.Thing, b.Thing.Do,
// [b.Thing], Options.Size, Options.Do (promoted), [Options], [New],
// errors.Is, time.Duration, a placeholder [DIR], a variable's v.Field, a
// file a.go and an import path example.com/x/b.Thing.
package a

import "example.com/x/b"

// Options configures New; see also Options.Lost.
type Options struct {
	Size int
	b.Thing
}

// New uses [b.Gone]: New(Options{Size: 1, Sise: f(2, "x, Y: z")}).
func New(Options) {}
`,
		"b/b.go":      "package b\n\ntype Thing struct{}\n\nfunc (Thing) Do() {}\n",
		"b/b_test.go": "package b_test\n\nimport \"testing\"\n\nfunc TestThing(t *testing.T) {}\n",
		"b/README.md": "Call `b.Thing.Do` on a `Thing`, not `Thing.Undo` nor `b.Absent`.\n\n```go\nb.Thing{}.Do()\nb.Other()\na.New(a.Options{Size: 1, Thing: b.Thing{}, Nope: 2})\n```\n\n```sh\nb.Skipped\ngo test -run '^(TestThing|TestGone)$' # not <TestName>\n```\n\nfunc TestMine is yours; BenchmarkGone is not.\n",
		"SPEC.md":     "`a.Options.Size` and `a.Options.Missing`; `strings.Cut` and `strings.Uncut`.\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := newDocIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	findings, err := ix.checkAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Ref))
	}
	want := []string{
		"a/a.go:1 b.Missing",
		"a/a.go:1 [Gone]",
		"a/a.go:1 Options.Nope",
		"a/a.go:1 b.Thing.Nope",
		"a/a.go:2 errors.Nope",
		"a/a.go:10 Options.Lost",
		"a/a.go:16 b.Gone",
		"a/a.go:16 Options.Sise",
		"b/README.md:1 Thing.Undo",
		"b/README.md:1 b.Absent",
		"b/README.md:5 b.Other",
		"b/README.md:6 a.Options.Nope",
		"b/README.md:11 TestGone",
		"b/README.md:14 BenchmarkGone",
		"SPEC.md:1 a.Options.Missing",
		"SPEC.md:1 strings.Uncut",
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
