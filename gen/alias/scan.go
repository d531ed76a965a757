package alias

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// decl is one declaration found in a file: its node and the file's text.
type decl struct {
	file int
	node ast.Node
}

// pkgScan is what the rewrite needs to know of a generated package: its
// parsed files, its types with their methods, and its typed constants.
type pkgScan struct {
	fset    *token.FileSet
	files   []*ast.File
	src     [][]byte
	types   map[string][]decl            // type name -> its *ast.TypeSpec (one per build-tagged file)
	methods map[string][]decl            // receiver type name -> its *ast.FuncDecl
	consts  map[string]map[string]string // type name -> constant name -> value key
}

// scan parses the files of a generated package.
func scan(names []string, contents [][]byte) (*pkgScan, error) {
	s := &pkgScan{
		fset:    token.NewFileSet(),
		types:   map[string][]decl{},
		methods: map[string][]decl{},
		consts:  map[string]map[string]string{},
	}
	for i, name := range names {
		f, err := parser.ParseFile(s.fset, name, contents[i], parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("alias: generated %s does not parse: %w", name, err)
		}
		s.files = append(s.files, f)
		s.src = append(s.src, contents[i])
		for _, d := range f.Decls {
			s.addDecl(i, d)
		}
	}
	return s, nil
}

func (s *pkgScan) addDecl(file int, d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			if name := recvName(d.Recv.List[0].Type); name != "" {
				s.methods[name] = append(s.methods[name], decl{file, d})
			}
		}
	case *ast.GenDecl:
		switch d.Tok {
		case token.TYPE:
			for _, sp := range d.Specs {
				ts := sp.(*ast.TypeSpec)
				s.types[ts.Name.Name] = append(s.types[ts.Name.Name], decl{file, ts})
			}
		case token.CONST:
			s.addConsts(file, d)
		}
	}
}

// addConsts records every constant of a named type with a key that is
// equal exactly when the value is: the expression's text, and the iota
// index where the expression uses iota (implicit repetition included).
func (s *pkgScan) addConsts(file int, d *ast.GenDecl) {
	var typ ast.Expr
	var values []ast.Expr
	for iota, sp := range d.Specs {
		vs := sp.(*ast.ValueSpec)
		if vs.Type != nil || len(vs.Values) > 0 {
			typ, values = vs.Type, vs.Values
		}
		id, ok := typ.(*ast.Ident)
		if !ok {
			continue
		}
		for j, n := range vs.Names {
			if j >= len(values) {
				break
			}
			key := s.text(file, values[j])
			if usesIota(values[j]) {
				key += fmt.Sprintf(" @%d", iota)
			}
			if s.consts[id.Name] == nil {
				s.consts[id.Name] = map[string]string{}
			}
			s.consts[id.Name][n.Name] = key
		}
	}
}

func usesIota(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "iota" {
			found = true
		}
		return !found
	})
	return found
}

func recvName(e ast.Expr) string {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// text is the source of node n of file i.
func (s *pkgScan) text(i int, n ast.Node) string {
	tf := s.fset.File(n.Pos())
	return string(s.src[i][tf.Offset(n.Pos()):tf.Offset(n.End())])
}

// fingerprint describes a type: its declaration, its methods' signatures
// and its methods in full, each as a hash.
func (s *pkgScan) fingerprint(name string) Type {
	var spec, sigs, full []string
	for _, d := range s.types[name] {
		spec = append(spec, s.text(d.file, d.node))
	}
	for _, d := range s.methods[name] {
		fd := d.node.(*ast.FuncDecl)
		sig := fd.Name.Name + " " + s.text(d.file, fd.Recv) + s.text(d.file, fd.Type)
		sigs = append(sigs, sig)
		full = append(full, s.text(d.file, fd))
	}
	return Type{Spec: hash(spec), Sigs: hash(sigs), Methods: hash(full), Consts: s.consts[name]}
}

// hash is a short hash of a set of texts (order-independent, so that the
// order of files does not matter).
func hash(parts []string) string {
	p := append([]string(nil), parts...)
	sort.Strings(p)
	sum := sha256.Sum256([]byte(strings.Join(p, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// refs returns the package's types that type name's declaration and its
// methods' signatures mention: an alias is possible only if they are
// aliases too.
func (s *pkgScan) refs(name string) []string {
	seen := map[string]bool{}
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field: // its names are not types
				visit(n.Type)
				return false
			case *ast.SelectorExpr: // another package's
				return false
			case *ast.Ident:
				if n.Name != name && s.types[n.Name] != nil {
					seen[n.Name] = true
				}
			}
			return true
		})
	}
	for _, d := range s.types[name] {
		visit(d.node.(*ast.TypeSpec).Type)
	}
	for _, d := range s.methods[name] {
		visit(d.node.(*ast.FuncDecl).Type)
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
