package alias

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
)

// importName is the name the rewritten files import the base package as.
const importName = "mlx5base"

// File is a generated file (the same shape as emit.File).
type File struct {
	Name    string
	Content []byte
}

// Apply rewrites the files of a generated package so that every type that
// agrees with base is an alias of it in the package importPath: the type's
// declaration becomes `T = mlx5base.T` and its methods are dropped (the
// base's apply). Constants and everything else stay as generated.
func Apply(files []File, base *Manifest, importPath string) ([]File, Decision, error) {
	if !validPath(importPath) {
		return nil, Decision{}, fmt.Errorf("alias: %q is not an import path", importPath)
	}
	names := make([]string, len(files))
	contents := make([][]byte, len(files))
	for i, f := range files {
		names[i], contents[i] = f.Name, f.Content
	}
	s, err := scan(names, contents)
	if err != nil {
		return nil, Decision{}, err
	}
	d := decide(s, base)
	aliased := map[string]bool{}
	for _, n := range d.Aliased {
		aliased[n] = true
	}
	out := make([]File, len(files))
	for i, f := range files {
		b, err := s.rewrite(i, aliased, importPath)
		if err != nil {
			return nil, d, fmt.Errorf("alias: rewriting %s: %w", f.Name, err)
		}
		out[i] = File{Name: f.Name, Content: b}
	}
	summary, err := summaryFile(files, s.files[0].Name.Name, importPath, d)
	if err != nil {
		return nil, d, err
	}
	return append(out, summary), d, nil
}

// SummaryName is the file Apply adds: the base's import path and the
// exported types that are not aliases, with the reason.
const SummaryName = "alias.go"

func summaryFile(files []File, pkg, importPath string, d Decision) (File, error) {
	var b strings.Builder
	if i := strings.Index(string(files[0].Content), "\n\n"); i >= 0 {
		b.WriteString(string(files[0].Content[:i]))
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	fmt.Fprintf(&b, "// AliasBase is the package whose types this one's %d aliased types are: those\n", len(d.Aliased))
	fmt.Fprintf(&b, "// whose declaration and methods are the same there, and whose constants have\n")
	fmt.Fprintf(&b, "// the same values (an enum may have more members here; its String is the\n")
	fmt.Fprintf(&b, "// base's, which prints them in hex). Their values are the runtime's types, so\n")
	fmt.Fprintf(&b, "// runtime/sq takes them; the constants here are typed with the aliases.\n")
	if len(d.Local) > 0 {
		fmt.Fprintf(&b, "//\n// These types are declared here; the runtime cannot take them:\n//\n")
		var names []string
		for n := range d.Local {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "//   - %s: %s\n", n, d.Local[n])
		}
	}
	fmt.Fprintf(&b, "const AliasBase = %s\n", strconv.Quote(importPath))
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return File{}, fmt.Errorf("alias: %s does not format: %w", SummaryName, err)
	}
	return File{Name: SummaryName, Content: src}, nil
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

func applyEdits(src []byte, edits []edit) []byte {
	// An insertion goes before a replacement that starts where it is.
	sort.Slice(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end < edits[j].end
	})
	var b []byte
	at := 0
	for _, e := range edits {
		b = append(b, src[at:e.start]...)
		b = append(b, e.text...)
		at = e.end
	}
	return append(b, src[at:]...)
}

// rewrite turns the aliased types of file i into aliases, adds the base's
// import and drops the imports nothing uses any more.
func (s *pkgScan) rewrite(i int, aliased map[string]bool, importPath string) ([]byte, error) {
	f := s.files[i]
	tf := s.fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	var edits []edit
	changed := false
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			// Drop the methods of an aliased type (the base's apply), and the
			// compile-time layout checks of one: the base checks its layout,
			// and its unexported fields are out of reach here.
			method := d.Recv != nil && aliased[recvName(d.Recv.List[0].Type)]
			check := d.Recv == nil && d.Name.Name == "_" && mentions(d.Body, aliased)
			if !method && !check {
				continue
			}
			start := d.Pos()
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
			end := off(d.End())
			if end < len(s.src[i]) && s.src[i][end] == '\n' {
				end++
			}
			edits = append(edits, edit{off(start), end, ""})
			changed = true
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, sp := range d.Specs {
				ts := sp.(*ast.TypeSpec)
				n := ts.Name.Name
				if !aliased[n] {
					continue
				}
				at := ts.Pos()
				if !d.Lparen.IsValid() {
					at = d.Pos()
				}
				note := fmt.Sprintf("// %s is an alias of %s.%s (%s): see AliasBase.\n", n, importName, n, importPath)
				if ts.Doc != nil || (d.Doc != nil && !d.Lparen.IsValid()) {
					note = "//\n" + note
				}
				edits = append(edits, edit{off(at), off(at), note},
					edit{off(ts.Pos()), off(ts.End()), n + " = " + importName + "." + n})
				changed = true
			}
		}
	}
	if !changed {
		return s.src[i], nil
	}
	edits = append(edits, edit{off(f.Name.End()), off(f.Name.End()),
		"\n\nimport " + importName + " " + strconv.Quote(importPath) + "\n"})
	b, err := dropUnusedImports(applyEdits(s.src[i], edits))
	if err != nil {
		return nil, err
	}
	return format.Source(b)
}

// dropUnusedImports removes the import specs (and import declarations
// left empty) that no selector of the file uses.
func dropUnusedImports(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	tf := fset.File(f.Pos())
	var edits []edit
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		var drop []ast.Spec
		for _, sp := range gd.Specs {
			is := sp.(*ast.ImportSpec)
			p, _ := strconv.Unquote(is.Path.Value)
			name := path.Base(p)
			if is.Name != nil {
				name = is.Name.Name
			}
			if name != "_" && name != "." && !used[name] {
				drop = append(drop, sp)
			}
		}
		if len(drop) == len(gd.Specs) {
			edits = append(edits, edit{tf.Offset(gd.Pos()), tf.Offset(gd.End()), ""})
			continue
		}
		for _, sp := range drop {
			edits = append(edits, edit{tf.Offset(sp.Pos()), tf.Offset(sp.End()), ""})
		}
	}
	return applyEdits(src, edits), nil
}

// mentions says whether n uses one of the names.
func mentions(n ast.Node, names map[string]bool) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && names[id.Name] {
			found = true
		}
		return !found
	})
	return found
}

// validPath says whether p is an import path: slash-separated elements of
// letters, digits and ._~+- that do not start with a dot.
func validPath(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if el == "" || el[0] == '.' {
			return false
		}
		for _, r := range el {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._~+-", r)) {
				return false
			}
		}
	}
	return true
}
