package cheader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// DefaultIncludeRoot and DefaultHeader are where Debian's libibverbs-dev
// installs mlx5dv.h.
const (
	DefaultIncludeRoot = "/usr/include"
	DefaultHeader      = "infiniband/mlx5dv.h"
)

// Config says which header to model.
type Config struct {
	// IncludeRoot is the directory that holds infiniband/ (default
	// /usr/include). It is searched before the system include directories,
	// so an unpacked rdma-core release shadows an installed one.
	IncludeRoot string
	// Header is the header to parse, relative to IncludeRoot (default
	// infiniband/mlx5dv.h).
	Header string
	// Cache, when set, keeps models already parsed (see Cache).
	Cache *Cache
}

// The model covers the RDMA headers: rdma-core's own, in infiniband/ under
// the include root, and the kernel's RDMA uapi headers in rdma/ (Debian ships
// them in linux-libc-dev), which rdma-core's headers include and whose
// types they embed. Declarations from anywhere else (libc, other kernel
// headers) are modelled only when an RDMA declaration uses them, and are
// marked External.
const (
	rdmaDir = "infiniband/"
	uapiDir = "rdma/"
)

var (
	baseOnce sync.Once
	baseCfg  *cc.Config
	baseErr  error
)

// hostConfig asks the host C compiler once for its predefined macros and
// include directories.
func hostConfig() (*cc.Config, error) {
	baseOnce.Do(func() {
		baseCfg, baseErr = cc.NewConfig(runtime.GOOS, runtime.GOARCH)
		if baseErr != nil {
			baseErr = fmt.Errorf("asking the host C compiler for its configuration (Debian package gcc): %w", baseErr)
		}
	})
	return baseCfg, baseErr
}

// Load parses the header and builds its model.
func Load(c Config) (*Model, error) {
	m, _, err := load(c)
	return m, err
}

// load is Load, also returning the parser for tests.
func load(c Config) (*Model, *parser, error) {
	if c.IncludeRoot == "" {
		c.IncludeRoot = DefaultIncludeRoot
	}
	if c.Header == "" {
		c.Header = DefaultHeader
	}
	if fi, err := os.Stat(c.IncludeRoot); err != nil {
		return nil, nil, &MissingError{Path: c.IncludeRoot, What: "include root", Package: packageFor(c.Header)}
	} else if !fi.IsDir() {
		return nil, nil, fmt.Errorf("include root %s is not a directory (the include root is the directory holding %s)", c.IncludeRoot, filepath.ToSlash(c.Header))
	}
	if _, err := os.Stat(filepath.Join(c.IncludeRoot, c.Header)); err != nil {
		return nil, nil, &MissingError{Path: filepath.Join(c.IncludeRoot, c.Header), What: "header", Package: packageFor(c.Header)}
	}
	root, err := filepath.Abs(c.IncludeRoot)
	if err != nil {
		return nil, nil, err
	}
	var key string
	if c.Cache != nil {
		var m *Model
		if m, key = c.cached(root); m != nil {
			return m, nil, nil
		}
	}

	base, err := hostConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg := *base
	cfg.IncludePaths = append([]string{root}, base.IncludePaths...)
	cfg.SysIncludePaths = append([]string{root}, base.SysIncludePaths...)
	cfg.Header = true
	cfg.UnsignedEnums = true // as gcc: an enum without negative values is unsigned

	p := &parser{root: root, searchDirs: dedup(append([]string{root}, base.SysIncludePaths...))}
	if key != "" {
		p.seen = map[string]bool{}
	}
	cfg.PragmaHandler = p.pragma
	src := fmt.Sprintf("#include <%s>\n", filepath.ToSlash(c.Header))

	// cc/v4 evaluates every object-like macro (libc's too) and gives up
	// silently when its expansion limit is reached. So the header is first
	// translated without that evaluation, the model's own bounded
	// expansion of every macro refuses a header whose macros would cost
	// too much, and only then does cc evaluate them, within a limit they
	// cannot reach.
	if _, err := p.translate(&cfg, src, false); err != nil {
		return nil, nil, err
	}
	ast, err := p.translate(&cfg, src, true)
	if err != nil {
		return nil, nil, err
	}
	p.ast = ast
	m := &Model{IncludeRoot: c.IncludeRoot, Header: filepath.ToSlash(c.Header)}
	p.m = m
	if err := p.build(); err != nil {
		return nil, nil, err
	}
	if key != "" {
		c.Cache.store(key, p.observed, m)
	}
	m.Version, m.VersionSource = detectVersion(root)
	m.index()
	return m, p, nil
}

// translate runs cc/v4 on the header. Without eval it stops at
// ccPreprocessLimit and checks that the model's own expansion of every
// object-like macro fits expandBudget; with eval, cc evaluates them all.
func (p *parser) translate(cfg *cc.Config, src string, eval bool) (*cc.AST, error) {
	p.once, p.track, p.srcErr = nil, packTracker{}, nil
	if p.fs == nil {
		p.fs = &sourceFS{p: p, markers: maxMarkers}
	}
	p.fs.last = eval
	cfg.FS = p.fs
	cfg.FSOnly = true // every file through sourceFS, none behind its back
	cfg.EvalAllMacros = eval
	cfg.ExpansionLimit = ccPreprocessLimit
	if eval {
		cfg.ExpansionLimit += ccEvalLimit
	}
	srcs := []cc.Source{
		{Name: "<predefined>", Value: cfg.Predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: "<mlx5gen>", Value: src},
	}
	var ast *cc.AST
	var err error
	if eval {
		ast, err = cc.Translate(cfg, srcs)
	} else {
		ast, err = cc.Parse(cfg, srcs) // the macros are all this pass needs
	}
	if p.track.abort != nil {
		return nil, p.track.abort
	}
	if r := p.srcErr; r != nil {
		return nil, &IncludeError{Where: r.where, Reason: r.reason}
	}
	if err != nil {
		return nil, p.parseError(err)
	}
	if !eval {
		if err := p.checkExpansions(ast); err != nil {
			return nil, err
		}
		// This pass's syntax tree is garbage now: free it before the
		// next pass builds its own, so that they never add up.
		ast = nil
		runtime.GC()
	}
	return ast, nil
}

// checkExpansions expands every object-like macro, in source order, within
// expandBudget.
func (p *parser) checkExpansions(ast *cc.AST) error {
	var list []*cc.Macro
	for _, m := range ast.Macros {
		if !m.IsFnLike && len(p.replTokens(m)) > 0 {
			list = append(list, m)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].Position(), list[j].Position()
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	x := newExpander(p, ast.Macros, expandBudget)
	for _, m := range list {
		if _, err := x.expand(m); err != nil {
			return err
		}
	}
	return nil
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range s {
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

type parser struct {
	root       string
	searchDirs []string
	ast        *cc.AST
	m          *Model

	once   map[string]bool
	track  packTracker
	srcErr *sourceRefusal // the first header text sourceFS refused
	fs     *sourceFS      // serves both translations

	// observed lists, for the model cache (nil: none), every file
	// sourceFS served or did not find, in the order first met.
	observed []observed
	seen     map[string]bool

	files map[string]bool // rdma-core headers seen

	// definitions found in the tree
	recSpecs  map[cc.Type]*cc.StructOrUnionSpecifier
	tdefAttrs map[string]attrs
	tdefInner map[string]string // typedef name -> typedef name it is defined with
	tdefPos   map[string]Pos
	tdefSpec  map[string]*cc.StructOrUnionSpecifier // typedef struct { ... } name

	enumByName map[string]*Enumerator
	repl       map[*cc.Macro][]string // replTokens

	records  map[string]*Record // key -> record
	enums    map[string]*Enum
	recOrder []*Record
	enumList []*Enum
}

var (
	errPosRE      = regexp.MustCompile(`^(.*?):(\d+):(\d+): (.*)$`)
	includeMissRE = regexp.MustCompile(`include file not found: (\S+)`)
)

// parseError turns cc's error list into file:line:col messages with paths
// relative to their include directory; a missing include file names the
// package that provides it.
func (p *parser) parseError(err error) error {
	var msgs []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		limit := strings.Contains(line, expansionLimitMsg)
		if m := errPosRE.FindStringSubmatch(line); m != nil {
			where := p.rel(m[1]) + ":" + m[2] + ":" + m[3]
			if im := includeMissRE.FindStringSubmatch(m[4]); im != nil {
				name := strings.Trim(im[1], `<>"`)
				return &MissingError{Path: name, What: "include file", Package: packageFor(name), Where: where}
			}
			line = where + ": " + ccMessage(m[1], m[4])
			if strings.HasPrefix(m[1], "<") && strings.Contains(m[4], expansionLimitMsg) {
				line = ccMessage(m[1], m[4]) // no position of the header's to give
			}
		}
		msgs = append(msgs, line)
		if limit {
			break // what follows cascades from it (internal errors, unbalanced parentheses)
		}
	}
	if len(msgs) == 0 {
		msgs = []string{err.Error()}
	}
	return &ParseError{Messages: msgs}
}

// rel makes a header path relative to the include directory it was found in.
func (p *parser) rel(file string) string {
	best := ""
	for _, d := range p.searchDirs {
		d = strings.TrimSuffix(d, "/") + "/"
		if strings.HasPrefix(file, d) && len(d) > len(best) {
			best = d
		}
	}
	return strings.TrimPrefix(file, best)
}

func (p *parser) pos(n interface{ Position() tokenPosition }) Pos {
	return p.tokPos(n.Position())
}

func (p *parser) tokPos(tp tokenPosition) Pos {
	if tp.Filename == "" {
		return Pos{}
	}
	return Pos{File: p.rel(tp.Filename), Line: tp.Line, Col: tp.Column}
}

// isRDMA reports whether a position is in an rdma-core header under the
// include root.
func (p *parser) isRDMA(tp tokenPosition) bool {
	return strings.HasPrefix(tp.Filename, p.root+"/"+rdmaDir) || strings.HasPrefix(p.rel(tp.Filename), uapiDir)
}

func (p *parser) noteFile(tp tokenPosition) {
	if p.isRDMA(tp) {
		if p.files == nil {
			p.files = map[string]bool{}
		}
		p.files[p.rel(tp.Filename)] = true
	}
}

// build walks the translation unit and fills the model.
func (p *parser) build() error {
	p.recSpecs = map[cc.Type]*cc.StructOrUnionSpecifier{}
	p.tdefAttrs = map[string]attrs{}
	p.tdefInner = map[string]string{}
	p.tdefPos = map[string]Pos{}
	p.tdefSpec = map[string]*cc.StructOrUnionSpecifier{}
	p.records = map[string]*Record{}
	p.enums = map[string]*Enum{}

	var defs []*cc.StructOrUnionSpecifier
	var enumDefs []*cc.EnumSpecifier
	var decls []*cc.Declaration
	var fdefs []*cc.FunctionDefinition
	for l := p.ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil {
			continue
		}
		switch ed.Case {
		case cc.ExternalDeclarationFuncDef:
			fdefs = append(fdefs, ed.FunctionDefinition)
			continue
		case cc.ExternalDeclarationDecl:
			decls = append(decls, ed.Declaration)
		default:
			continue
		}
		d := ed.Declaration
		p.collectDefs(d.DeclarationSpecifiers, &defs, &enumDefs)
		p.noteTypedefs(d)
	}

	// Records and enums defined in rdma-core headers, in source order,
	// pulling in whatever libc or kernel types they need.
	for _, s := range defs {
		if !p.isRDMA(s.Position()) {
			continue
		}
		p.noteFile(s.Position())
		if _, err := p.record(s.Type(), s); err != nil {
			return err
		}
	}
	for _, s := range enumDefs {
		if !p.isRDMA(s.Position()) {
			continue
		}
		et, ok := s.Type().(*cc.EnumType)
		if !ok {
			continue
		}
		if _, err := p.enum(et); err != nil {
			return err
		}
	}

	if err := p.declarations(decls, fdefs); err != nil {
		return err
	}
	if err := p.macros(); err != nil {
		return err
	}

	for _, r := range p.recOrder {
		if r.External {
			p.m.External = append(p.m.External, r)
		} else {
			p.m.Records = append(p.m.Records, r)
		}
	}
	for _, e := range p.enumList {
		if e.External {
			p.m.ExternEnums = append(p.m.ExternEnums, e)
		} else {
			p.m.Enums = append(p.m.Enums, e)
		}
	}
	sortByPos := func(a, b Pos) bool {
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	}
	// Records are created in the order they are first needed; report them
	// in source order.
	sort.SliceStable(p.m.Records, func(i, j int) bool { return sortByPos(p.m.Records[i].Pos, p.m.Records[j].Pos) })
	sort.SliceStable(p.m.External, func(i, j int) bool { return sortByPos(p.m.External[i].Pos, p.m.External[j].Pos) })
	sort.SliceStable(p.m.Enums, func(i, j int) bool { return sortByPos(p.m.Enums[i].Pos, p.m.Enums[j].Pos) })
	sort.SliceStable(p.m.ExternEnums, func(i, j int) bool { return sortByPos(p.m.ExternEnums[i].Pos, p.m.ExternEnums[j].Pos) })
	for f := range p.files {
		p.m.Files = append(p.m.Files, f)
	}
	sort.Strings(p.m.Files)
	return nil
}

// noteTypedefs records, for every typedef, the attributes written on its
// declaration and the typedef name it is defined with, so that the model can
// follow chains such as __be32 -> __u32 and apply aligned(N) on typedefs
// (__aligned_u64), which cc/v4 does not expose.
func (p *parser) noteTypedefs(d *cc.Declaration) {
	if d.InitDeclaratorList == nil {
		return
	}
	var a attrs
	inner := ""
	for l := d.InitDeclaratorList; l != nil; l = l.InitDeclaratorList {
		id := l.InitDeclarator
		if id == nil || id.Declarator == nil || !id.Declarator.IsTypename() {
			continue
		}
		if a == nil {
			a, _ = declAttrs(d)
			if t := d.DeclarationSpecifiers.Type(); t != nil && t.Typedef() != nil {
				inner = t.Typedef().Name()
			}
		}
		dd := id.Declarator
		name := dd.Name()
		p.tdefAttrs[name] = a
		if dd.Pointer == nil && dd.DirectDeclarator != nil && dd.DirectDeclarator.Case == cc.DirectDeclaratorIdent {
			p.tdefInner[name] = inner
		}
		p.tdefPos[name] = p.pos(dd)
		if spec := definedRecord(d.DeclarationSpecifiers); spec != nil {
			p.tdefSpec[name] = spec
		}
	}
}

// declarations collects typedefs, prototypes and inline definitions.
func (p *parser) declarations(decls []*cc.Declaration, fdefs []*cc.FunctionDefinition) error {
	for _, d := range decls {
		if !p.isRDMA(d.Position()) {
			continue
		}
		p.noteFile(d.Position())
		for l := d.InitDeclaratorList; l != nil; l = l.InitDeclaratorList {
			id := l.InitDeclarator
			if id == nil || id.Declarator == nil {
				continue
			}
			dd := id.Declarator
			if dd.IsTypename() {
				t, err := p.typ(dd.Type(), p.pos(dd), dd.Name())
				if err != nil {
					return err
				}
				// The typedef's own name is not part of the type it
				// stands for.
				t = stripOuterTypedef(t, dd.Name())
				p.m.Typedefs = append(p.m.Typedefs, &Typedef{Pos: p.pos(dd), Name: dd.Name(), Type: t})
				p.nameAnonymous(t, dd.Name())
				continue
			}
			if dd.Type().Kind() == cc.Function {
				f, err := p.fn(dd, false)
				if err != nil {
					return err
				}
				p.m.Funcs = append(p.m.Funcs, f)
			}
		}
	}
	for _, fd := range fdefs {
		if !p.isRDMA(fd.Position()) || fd.Declarator == nil {
			continue
		}
		f, err := p.fn(fd.Declarator, true)
		if err != nil {
			return err
		}
		p.m.Funcs = append(p.m.Funcs, f)
	}
	return nil
}

// nameAnonymous gives "typedef struct { ... } name" its typedef name.
func (p *parser) nameAnonymous(t *Type, name string) {
	switch {
	case t.Record != nil && t.Record.Tag == "" && t.Record.Typedef == "" && t.Record.Parent == nil:
		t.Record.Typedef = name
	case t.Enum != nil && t.Enum.Tag == "" && t.Enum.Typedef == "":
		t.Enum.Typedef = name
	}
}

func stripOuterTypedef(t *Type, name string) *Type {
	if t.Name != name {
		return t
	}
	c := *t
	c.Typedefs = t.Typedefs[1:]
	c.Name = ""
	if len(c.Typedefs) > 0 {
		c.Name = c.Typedefs[0]
	}
	return &c
}

func (p *parser) fn(d *cc.Declarator, body bool) (*Func, error) {
	ft, ok := d.Type().(*cc.FunctionType)
	if !ok {
		return nil, fmt.Errorf("%s: %s: not a function type", p.pos(d), d.Name())
	}
	sig, err := p.funcType(ft, p.pos(d), d.Name())
	if err != nil {
		return nil, err
	}
	return &Func{Pos: p.pos(d), Name: d.Name(), Type: sig, Static: d.IsStatic(), Inline: d.IsInline(), Body: body}, nil
}

var errNotConst = errors.New("not an integer constant")

// definedRecord returns the struct or union a declaration's specifiers
// define, if any.
func definedRecord(ds *cc.DeclarationSpecifiers) *cc.StructOrUnionSpecifier {
	for ; ds != nil; ds = ds.DeclarationSpecifiers {
		if ts := ds.TypeSpecifier; ts != nil && ts.StructOrUnionSpecifier != nil && ts.StructOrUnionSpecifier.StructDeclarationList != nil {
			return ts.StructOrUnionSpecifier
		}
	}
	return nil
}

// collectDefs finds the struct, union and enum definitions in a file-scope
// declaration's specifiers, nested ones included.
func (p *parser) collectDefs(ds *cc.DeclarationSpecifiers, defs *[]*cc.StructOrUnionSpecifier, enums *[]*cc.EnumSpecifier) {
	for ; ds != nil; ds = ds.DeclarationSpecifiers {
		p.collectTypeSpec(ds.TypeSpecifier, defs, enums)
	}
}

func (p *parser) collectTypeSpec(ts *cc.TypeSpecifier, defs *[]*cc.StructOrUnionSpecifier, enums *[]*cc.EnumSpecifier) {
	if ts == nil {
		return
	}
	if es := ts.EnumSpecifier; es != nil && es.EnumeratorList != nil {
		*enums = append(*enums, es)
	}
	s := ts.StructOrUnionSpecifier
	if s == nil || s.StructDeclarationList == nil {
		return
	}
	*defs = append(*defs, s)
	p.recSpecs[s.Type()] = s
	for l := s.StructDeclarationList; l != nil; l = l.StructDeclarationList {
		if sd := l.StructDeclaration; sd != nil {
			for sq := sd.SpecifierQualifierList; sq != nil; sq = sq.SpecifierQualifierList {
				p.collectTypeSpec(sq.TypeSpecifier, defs, enums)
			}
		}
	}
}
