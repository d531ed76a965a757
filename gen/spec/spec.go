// Package spec reads mlx5gen's YAML API descriptors (the spec/ directory):
// which enums are flag sets, the layouts of WQE segments that are not in
// the public header, how a send WQE is laid out per opcode, and (see
// functions.go) the functions, structs and rules of the mlx5dv man pages.
//
// Decoding is strict: unknown keys, duplicate keys, missing required keys
// and wrongly typed values are errors, and every error reads
// file:line:col: message. spec/README.md documents the schema.
package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// Spec is every descriptor file of a spec directory, merged.
type Spec struct {
	Files []string // the files read, in order, as positions name them
	Rel   []string // the same, relative to the spec directory
	// PRMOnly holds the files (as Rel names them) that describe PRM
	// layouts and enums only: the header's package does not come from them.
	PRMOnly   map[string]bool
	Enums     []*Enum
	Segments  []*Segment
	Formats   []*WQEFormat
	Functions []*Function
	Structs   []*Struct
	Rules     []*Rule
	PRMEnums  []*PRMEnum // see prm.go
	Layouts   []*Layout
}

// File is the top level of one descriptor file. Every section is optional.
type File struct {
	Doc       string       `yaml:"doc"`
	Man       string       `yaml:"man"` // default man page of the file's functions, structs and rules
	Enums     []*Enum      `yaml:"enums"`
	Segments  []*Segment   `yaml:"segments"`
	Formats   []*WQEFormat `yaml:"wqe_formats"`
	Functions []*Function  `yaml:"functions"`
	Structs   []*Struct    `yaml:"structs"`
	Rules     []*Rule      `yaml:"rules"`
	PRMEnums  []*PRMEnum   `yaml:"prm_enums"`
	Layouts   []*Layout    `yaml:"prm_layouts"`
}

// Gate limits a descriptor to the rdma-core releases that have it.
type Gate struct {
	Since string `yaml:"since"` // first release (e.g. "56.1"); "" = always
	Until string `yaml:"until"` // first release without it; "" = still there
}

// Enum says how an enum of the header is generated.
type Enum struct {
	Pos Pos `yaml:"-"`
	// C is the enum's tag (ibv_access_flags); for an anonymous enum,
	// Anonymous names one of its enumerators instead.
	C         string `yaml:"c"`
	Anonymous string `yaml:"anonymous"`
	Go        string `yaml:"go"`            // Go type name; default from C
	Kind      string `yaml:"kind,required"` // "flags" or "values"
	Man       string `yaml:"man"`           // man page that documents it
	Doc       string `yaml:"doc"`
	// Members gives some enumerators a meaning: what the value says, for
	// a reader of a raw value (an error CQE's syndrome) who has no manual.
	Members []*EnumMember `yaml:"members"`
	Gate    `yaml:",inline"`
}

// EnumMember is the meaning of one enumerator of an enum.
type EnumMember struct {
	Pos     Pos    `yaml:"-"`
	Name    string `yaml:"name,required"`    // the C enumerator
	Meaning string `yaml:"meaning,required"` // one line, our own words
}

// Flags reports whether the enum is a flag set.
func (e *Enum) Flags() bool { return e.Kind == "flags" }

// Segment describes a WQE or CQE segment: a struct of the header, refined
// (subfields, corrected endianness, docs), or a private one laid out here.
type Segment struct {
	Pos Pos `yaml:"-"`
	// C is the struct's name: the tag of a header struct, or the name of
	// the private struct in rdma-core's source.
	C       string `yaml:"c,required"`
	Go      string `yaml:"go"`
	Private string `yaml:"private"` // source file of a struct not in the public header
	Size    int    `yaml:"size"`    // private segments: size in bytes
	Doc     string `yaml:"doc"`
	// Fields: for a private segment, every field; for a header segment,
	// overrides of fields the header declares (endianness, docs, parts).
	Fields []*Field `yaml:"fields"`
}

// Field is one field of a segment.
type Field struct {
	Pos    Pos    `yaml:"-"`
	Name   string `yaml:"name,required"`
	Offset int    `yaml:"offset"` // private segments: byte offset
	// Type: u8, be16, be32, be64, le16, le32, le64, u16, u32, u64 (host
	// order), bytes (Len bytes), or segment (Segment names a segment).
	Type    string  `yaml:"type"`
	Len     int     `yaml:"len"`     // bytes: size; integer types: array length
	Segment string  `yaml:"segment"` // type segment: which one
	Endian  string  `yaml:"endian"`  // header segments: "big" where the header says host order but the device uses big-endian
	Enum    string  `yaml:"enum"`    // Go enum type the value takes
	Doc     string  `yaml:"doc"`
	Parts   []*Part `yaml:"parts"`
}

// Part is a bit range of an integer field with a name of its own, such as
// the opcode in the low byte of the control segment's opmod_idx_opcode.
type Part struct {
	Pos   Pos    `yaml:"-"`
	Name  string `yaml:"name,required"`
	Shift int    `yaml:"shift"`          // bit position of the least significant bit
	Width int    `yaml:"width,required"` // bits
	Enum  string `yaml:"enum"`           // Go enum type the value takes
	Doc   string `yaml:"doc"`
}

// WQEFormat says which segments follow the control segment for a set of
// opcodes; the generated Split function is built from these.
type WQEFormat struct {
	Pos     Pos      `yaml:"-"`
	Name    string   `yaml:"name,required"`
	Opcodes []string `yaml:"opcodes,required"`
	// Segments in order after the control segment. An entry is a segment
	// name, "data*" (data segments, or one inline segment, up to ds),
	// or "umr*" (the UMR body: mkey context, translation and BSFs as
	// the UMR control segment sizes them).
	Segments []string `yaml:"segments,required"`
	Doc      string   `yaml:"doc"`
}

// Load reads every *.yaml file under dir in fsys (recursively, in lexical
// order). Positions name files as dir-relative paths prefixed by name
// (name is usually "spec").
func Load(fsys fs.FS, dir, name string) (*Spec, error) {
	var files []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such spec directory", name)
	}
	if err != nil {
		return nil, fmt.Errorf("spec directory %s: %v", name, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no spec descriptors (*.yaml files) in the spec directory", name)
	}
	sort.Strings(files)
	s := &Spec{}
	var errs diag.List
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(f, dir), "/")
		display := path.Join(name, rel)
		var file File
		if e := decodeFile(display, data, &file); len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		s.Files = append(s.Files, display)
		s.Rel = append(s.Rel, rel)
		if file.prmOnly() {
			if s.PRMOnly == nil {
				s.PRMOnly = map[string]bool{}
			}
			s.PRMOnly[rel] = true
		}
		s.Enums = append(s.Enums, file.Enums...)
		s.Segments = append(s.Segments, file.Segments...)
		s.Formats = append(s.Formats, file.Formats...)
		for _, f := range file.Functions {
			if f.Man == "" {
				f.Man = file.Man
			}
		}
		for _, st := range file.Structs {
			if st.Man == "" {
				st.Man = file.Man
			}
		}
		for _, r := range file.Rules {
			if r.Man == "" {
				r.Man = file.Man
			}
		}
		s.Functions = append(s.Functions, file.Functions...)
		s.Structs = append(s.Structs, file.Structs...)
		s.Rules = append(s.Rules, file.Rules...)
		s.PRMEnums = append(s.PRMEnums, file.PRMEnums...)
		s.Layouts = append(s.Layouts, file.Layouts...)
	}
	// A file that did not decode leaves its names undescribed: the
	// others' references to them are not checked, or they would be
	// blamed for its error.
	errs = append(errs, s.check(len(errs) > 0)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// check validates what can be validated without the header; partial says
// a file is missing (it did not decode), so references between files are
// not checked.
func (s *Spec) check(partial bool) diag.List {
	var errs diag.List
	bad := func(p Pos, format string, args ...any) {
		errs = append(errs, &diag.Error{Pos: p, Msg: sprintf(format, args...)})
	}
	seen := map[string]Pos{}
	for _, e := range s.Enums {
		switch {
		case e.C == "" && e.Anonymous == "":
			bad(e.Pos, "enum: give c (the tag) or anonymous (one of its enumerators)")
		case e.C != "" && e.Anonymous != "":
			bad(e.Pos, "enum: give c or anonymous, not both")
		case e.Anonymous != "" && e.Go == "":
			bad(e.Pos, "enum with anonymous %s: an anonymous enum needs a go name", e.Anonymous)
		}
		if e.Kind != "flags" && e.Kind != "values" {
			bad(e.Pos, "enum %s: kind must be flags or values, not %q", e.C+e.Anonymous, e.Kind)
		}
		key := "enum " + e.C + e.Anonymous
		if p, dup := seen[key]; dup {
			bad(e.Pos, "%s described twice (first at %s)", key, p)
		}
		seen[key] = e.Pos
		errs = append(errs, checkGate(e.Pos, e.Gate)...)
		errs = append(errs, checkMembers(e)...)
	}
	errs = append(errs, checkSegments(s.Segments, seen)...)
	for _, w := range s.Formats {
		for _, seg := range w.Segments {
			if seg == "" {
				bad(w.Pos, "wqe format %s: empty segment name", w.Name)
			}
		}
	}
	errs = append(errs, s.checkAPI(partial)...)
	errs = append(errs, s.checkPRM()...)
	return errs
}

// checkMembers validates an enum's member meanings: each names an
// enumerator once and is one line (it is printed inside error messages).
func checkMembers(e *Enum) diag.List {
	var errs diag.List
	seen := map[string]Pos{}
	for _, m := range e.Members {
		if p, dup := seen[m.Name]; dup {
			errs = append(errs, &diag.Error{Pos: m.Pos, Msg: sprintf("enum %s: member %s given twice (first at %s)", e.C+e.Anonymous, m.Name, p)})
		}
		seen[m.Name] = m.Pos
		if m.Meaning = strings.TrimSpace(m.Meaning); m.Meaning == "" || strings.Contains(m.Meaning, "\n") {
			errs = append(errs, &diag.Error{Pos: m.Pos, Msg: sprintf("enum %s: member %s: the meaning must be one non-empty line", e.C+e.Anonymous, m.Name)})
		}
	}
	return errs
}

// checkSegments validates the segment descriptors; seen holds the keys
// described so far, for duplicates.
func checkSegments(segs []*Segment, seen map[string]Pos) diag.List {
	var errs diag.List
	bad := func(p Pos, format string, args ...any) {
		errs = append(errs, &diag.Error{Pos: p, Msg: sprintf(format, args...)})
	}
	for _, g := range segs {
		key := "segment " + g.C
		if p, dup := seen[key]; dup {
			bad(g.Pos, "%s described twice (first at %s)", key, p)
		}
		seen[key] = g.Pos
		if g.Private != "" {
			if g.Size <= 0 {
				bad(g.Pos, "private segment %s: size must be positive", g.C)
			} else if g.Size > MaxSegmentSize {
				bad(g.Pos, "private segment %s: size %d is more than a WQE holds (%d bytes)", g.C, g.Size, MaxSegmentSize)
			}
			if len(g.Fields) == 0 {
				bad(g.Pos, "private segment %s: no fields", g.C)
			}
		} else if g.Size != 0 {
			bad(g.Pos, "segment %s: size is for private segments; the header gives this one's", g.C)
		}
		names := map[string]bool{}
		for _, f := range g.Fields {
			if names[f.Name] {
				bad(f.Pos, "segment %s: field %s described twice", g.C, f.Name)
			}
			names[f.Name] = true
			if g.Private != "" {
				if f.Type == "" {
					bad(f.Pos, "segment %s: field %s: type missing", g.C, f.Name)
				} else if !validType(f.Type) {
					bad(f.Pos, "segment %s: field %s: unknown type %q (want u8, be16, be32, be64, le16, le32, le64, u16, u32, u64, bytes or segment)", g.C, f.Name, f.Type)
				}
				if f.Type == "bytes" && f.Len <= 0 {
					bad(f.Pos, "segment %s: field %s: bytes needs len", g.C, f.Name)
				}
				if f.Type == "segment" && f.Segment == "" {
					bad(f.Pos, "segment %s: field %s: type segment needs segment", g.C, f.Name)
				}
				if f.Endian != "" {
					bad(f.Pos, "segment %s: field %s: endian is for header fields; say it in the type", g.C, f.Name)
				}
				// Bounded here so that offset + size cannot overflow later.
				if size := max(g.Size, 0); f.Offset < 0 || f.Offset >= max(size, 1) || f.Offset > MaxSegmentSize {
					bad(f.Pos, "segment %s: field %s: offset %d is outside the %d-byte segment", g.C, f.Name, f.Offset, size)
				}
				if size := max(g.Size, 0); f.Len < 0 || f.Len > size || f.Len > MaxSegmentSize {
					bad(f.Pos, "segment %s: field %s: len %d does not fit the %d-byte segment", g.C, f.Name, f.Len, size)
				}
			} else {
				if f.Type != "" || f.Offset != 0 || f.Len != 0 || f.Segment != "" {
					bad(f.Pos, "segment %s: field %s: the header gives this field's type and offset", g.C, f.Name)
				}
				if f.Endian != "" && f.Endian != "big" && f.Endian != "little" {
					bad(f.Pos, "segment %s: field %s: endian must be big or little", g.C, f.Name)
				}
			}
			for _, p := range f.Parts {
				// Each bounded before the sum, which cannot overflow then.
				if p.Width <= 0 || p.Width > 64 || p.Shift < 0 || p.Shift > 63 || p.Shift+p.Width > 64 {
					bad(p.Pos, "segment %s: field %s: part %s: bad bit range shift %d width %d", g.C, f.Name, p.Name, p.Shift, p.Width)
				}
			}
		}
	}
	return errs
}

// MaxSegmentSize bounds a private segment: a WQE is at most 63 16-byte
// units (ds, in the control segment, has 6 bits), and a CQE is 64 or 128
// bytes.
const MaxSegmentSize = 1024

func validType(t string) bool {
	_, isInt := vocab.IntFields[t]
	return isInt || t == "bytes" || t == "segment"
}
