package spec

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func load(t *testing.T, files map[string]string) error {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys["spec/"+name] = &fstest.MapFile{Data: []byte(src)}
	}
	_, err := Load(fsys, "spec", "spec")
	return err
}

func TestRealSpecLoads(t *testing.T) {
	s, err := Load(os.DirFS("../.."), "spec", "spec")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Enums) < 40 || len(s.Segments) < 15 || len(s.Formats) < 5 {
		t.Errorf("spec: %d enums, %d segments, %d formats", len(s.Enums), len(s.Segments), len(s.Formats))
	}
}

func TestDecodeErrorsHavePositions(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"unknown key", "enums:\n  - c: x\n    kind: flags\n    colour: red\n", "spec/a.yaml:4:5: unknown key \"colour\""},
		{"missing kind", "enums:\n  - c: x\n", "spec/a.yaml:2:5: missing required key \"kind\""},
		{"bad kind", "enums:\n  - {c: x, kind: bits}\n", "spec/a.yaml:2:5: enum x: kind must be flags or values"},
		{"duplicate key", "enums:\n  - c: x\n    c: y\n    kind: flags\n", "spec/a.yaml:3:5: duplicate key \"c\""},
		{"list expected", "enums: {c: x}\n", "spec/a.yaml:1:8: want a list, got a mapping"},
		{"int expected", "segments:\n  - c: s\n    private: x.h\n    size: big\n    fields: [{name: a, type: u8}]\n", "spec/a.yaml:4:11: want a 64-bit integer, got \"big\""},
		{"syntax", "enums:\n  - c: x\n   kind: [\n", "spec/a.yaml:1:1: YAML syntax: did not find expected"},
		{"syntax line", "enums:\n  - {c: x, kind: flags}\nsegments: [\n", "spec/a.yaml:3:1: YAML syntax:"},
		{"empty", "", "spec/a.yaml:1:1: empty spec file"},
		{"alias", "x: &a {c: y}\nenums: [*a]\n", "unknown key \"x\""},
		{"member twice", "enums:\n  - {c: x, kind: values, members: [{name: A, meaning: a}, {name: A, meaning: b}]}\n", "spec/a.yaml:2:59: enum x: member A given twice (first at spec/a.yaml:2:36)"},
		{"member no meaning", "enums:\n  - {c: x, kind: values, members: [{name: A, meaning: \" \"}]}\n", "enum x: member A: the meaning must be one non-empty line"},
		{"member two lines", "enums:\n  - {c: x, kind: values, members: [{name: A, meaning: \"a\\nb\"}]}\n", "enum x: member A: the meaning must be one non-empty line"},
		{"gate", "enums:\n  - {c: x, kind: flags, since: fifty}\n", "spec/a.yaml:2:5: version \"fifty\" is not an rdma-core release"},
		{"gate order", "enums:\n  - {c: x, kind: flags, since: \"56.1\", until: \"44.0\"}\n", "since 56.1 is not before until 44.0"},
		{"private size", "segments:\n  - {c: s, private: x.h, fields: [{name: a, type: u8}]}\n", "private segment s: size must be positive"},
		{"bad type", "segments:\n  - c: s\n    private: x.h\n    size: 4\n    fields: [{name: a, type: be24}]\n", "spec/a.yaml:5:14: segment s: field a: unknown type \"be24\""},
		{"header field type", "segments:\n  - c: s\n    fields: [{name: a, type: u8}]\n", "the header gives this field's type and offset"},
		{"part range", "segments:\n  - c: s\n    fields:\n      - name: a\n        parts: [{name: p, shift: 60, width: 8}]\n", "spec/a.yaml:5:17: segment s: field a: part p: bad bit range"},
		{"if_declared", "man: x(3)\nrules:\n  - {id: x.y, section: S, says: s, kind: info, if_declared: \"no such\"}\n", "spec/a.yaml:3:5: rule x.y: if_declared \"no such\" is not a C identifier"},
		{"part shift overflows", "segments:\n  - c: s\n    fields:\n      - name: a\n        parts: [{name: p, shift: 9223372036854775807, width: 1}]\n", "spec/a.yaml:5:17: segment s: field a: part p: bad bit range"},
		{"part width overflows", "segments:\n  - c: s\n    fields:\n      - name: a\n        parts: [{name: p, shift: 1, width: 9223372036854775807}]\n", "spec/a.yaml:5:17: segment s: field a: part p: bad bit range"},
		{"private size too large", "segments:\n  - {c: s, private: x.h, size: 4294967296, fields: [{name: a, type: u8}]}\n", "spec/a.yaml:2:5: private segment s: size 4294967296 is more than a WQE holds (1024 bytes)"},
		{"private offset overflows", "segments:\n  - c: s\n    private: x.h\n    size: 16\n    fields: [{name: a, type: be32, offset: 9223372036854775807}]\n", "spec/a.yaml:5:14: segment s: field a: offset 9223372036854775807 is outside the 16-byte segment"},
		{"private offset negative", "segments:\n  - c: s\n    private: x.h\n    size: 16\n    fields: [{name: a, type: be32, offset: -4}]\n", "spec/a.yaml:5:14: segment s: field a: offset -4 is outside the 16-byte segment"},
		{"private len overflows", "segments:\n  - c: s\n    private: x.h\n    size: 16\n    fields: [{name: a, type: be64, len: 4611686018427387904}]\n", "spec/a.yaml:5:14: segment s: field a: len 4611686018427387904 does not fit the 16-byte segment"},
		{"private len negative", "segments:\n  - c: s\n    private: x.h\n    size: 16\n    fields: [{name: a, type: be32, len: -1}]\n", "spec/a.yaml:5:14: segment s: field a: len -1 does not fit the 16-byte segment"},
		{"second document", "enums:\n  - {c: x, kind: flags}\n---\nfunctions: [{bogus: 1}]\n", "spec/a.yaml:3:1: a second YAML document"},
		{"empty second document", "enums:\n  - {c: x, kind: flags}\n---\n", "spec/a.yaml:3:1: a second YAML document"},
		{"syntax in second document", "enums:\n  - {c: x, kind: flags}\n---\nb: [\n", "spec/a.yaml:4:1: YAML syntax"},
		{"opaque with fields", "man: x(3)\nstructs:\n  - name: s\n    opaque: no mirror\n    fields: [{name: a, type: int}]\n", "spec/a.yaml:5:14: struct s: an opaque struct lists no fields"},
		{"opaque two lines", "man: x(3)\nstructs:\n  - {name: s, opaque: \"a\\nb\"}\n", "spec/a.yaml:3:5: struct s: opaque must be one non-empty line"},
		{"opaque blank", "man: x(3)\nstructs:\n  - {name: s, opaque: \" \"}\n", "spec/a.yaml:3:5: struct s: opaque must be one non-empty line"},
		{"struct without fields", "man: x(3)\nstructs:\n  - {name: s}\n", "spec/a.yaml:3:5: struct s: no fields: list every field of the header's struct, or give opaque:"},
		{"check on an opaque struct", "man: x(3)\nstructs:\n  - {name: s, opaque: no mirror}\nrules:\n  - id: x.y\n    section: S\n    says: s\n    kind: argument\n    errno: EINVAL\n    check: {struct: s, field: a, zero: true}\n",
			"spec/a.yaml:10:12: rule x.y: check names struct s, which is opaque"},
		{"anonymous needs go", "enums:\n  - {anonymous: X, kind: values}\n", "an anonymous enum needs a go name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := load(t, map[string]string{"a.yaml": c.src})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
}

func TestDuplicateAcrossFiles(t *testing.T) {
	err := load(t, map[string]string{
		"a.yaml": "enums:\n  - {c: x, kind: flags}\n",
		"b.yaml": "enums:\n  - {c: x, kind: values}\n",
	})
	if err == nil || !strings.Contains(err.Error(), "spec/b.yaml:2:5: enum x described twice (first at spec/a.yaml:2:5)") {
		t.Errorf("got %v", err)
	}
}

func TestGate(t *testing.T) {
	g := Gate{Since: "56.1"}
	if g.Includes("44.0") || !g.Includes("56.1") || !g.Includes("65.0") || !g.Includes("") {
		t.Error("since")
	}
	g = Gate{Until: "56.1"}
	if !g.Includes("44.0") || g.Includes("56.1") {
		t.Error("until")
	}
	if CompareVersions("9.0", "10.0") != -1 {
		t.Error("numeric compare")
	}
}

func TestNormalizeVersion(t *testing.T) {
	for in, want := range map[string]string{"45.0": "45.0", "45": "45.0", "v64.0": "64.0", " 56.1 ": "56.1", "056.01": "56.1"} {
		if got, err := NormalizeVersion(in); err != nil || got != want {
			t.Errorf("NormalizeVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "45.x", "1.2.3", "-1.0", "99999.0"} {
		if got, err := NormalizeVersion(in); err == nil || !strings.Contains(err.Error(), "is not a release like 56.1") {
			t.Errorf("NormalizeVersion(%q) = %q, %v; want an error", in, got, err)
		}
	}
}

// FuzzLoad: any bytes give a spec or errors with positions, never a panic.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"enums/mlx5dv.yaml", "enums/verbs.yaml", "hw/segments.yaml", "hw/wqe.yaml"} {
		b, err := os.ReadFile("../../spec/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("enums: [{c: x, kind: flags, colour: 1}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Load(fstest.MapFS{"spec/a.yaml": &fstest.MapFile{Data: data}}, "spec", "spec")
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(line, "spec/a.yaml:") {
				t.Fatalf("error without a position: %q", line)
			}
		}
	})
}

// TestEmptySpecDirectory: a directory without descriptors is an error
// naming it, and so is one that does not exist.
func TestEmptySpecDirectory(t *testing.T) {
	fsys := fstest.MapFS{"spec/README.md": &fstest.MapFile{Data: []byte("x")}}
	if _, err := Load(fsys, "spec", "myspec"); err == nil || !strings.Contains(err.Error(), "myspec: no spec descriptors (*.yaml files)") {
		t.Errorf("empty: %v", err)
	}
	if _, err := Load(fsys, "nowhere", "nowhere"); err == nil || err.Error() != "nowhere: no such spec directory" {
		t.Errorf("missing: %v", err)
	}
}

// TestVocabulary: the words a descriptor numbers by (function kinds, QP
// types, setter groups, field types) are checked against gen/vocab.
func TestVocabulary(t *testing.T) {
	fn := "man: x(3)\nfunctions:\n  - {name: f, returns: deferred, %s}\n"
	for _, c := range []struct{ src, want string }{
		{strings.Replace(fn, "%s", "kind: verbish", 1), "function f: kind must be verb, builder, setter or helper, not \"verbish\""},
		{strings.Replace(fn, "%s", "kind: builder, qp_types: [RC, XRC]", 1), "function f: unknown QP type \"XRC\" (want one of [RC UC UD XRC_SEND RAW_PACKET DCI])"},
		{strings.Replace(fn, "%s", "kind: builder, qp_types: [RC], takes: [data, colour]", 1), "function f: unknown setter group \"colour\""},
		{strings.Replace(fn, "%s", "kind: setter, qp_types: [RC], group: colour", 1), "function f: a setter needs a group, one of [data dc_addr"},
		{"segments:\n  - c: s\n    private: x.h\n    size: 4\n    fields: [{name: a, type: le8}]\n", "unknown type \"le8\""},
		{"man: x(3)\nfunctions:\n  - {name: f, kind: verb, returns: minus-one}\n", "function f: returns must be pointer-errno, errno, negative-errno, minus-one-errno, deferred, void or value, not \"minus-one\""},
		{"man: x(3)\nfunctions:\n  - {name: f, kind: verb, returns: errno, macro: \"f(x)\"}\n", "spec/a.yaml:3:5: function f: macro must name a C function, not \"f(x)\""},
		{"man: x(3)\nfunctions:\n  - {name: f, kind: verb, returns: errno, inline: maybe}\n", "spec/a.yaml:3:51: want true or false, got \"maybe\""},
	} {
		if err := load(t, map[string]string{"a.yaml": c.src}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\ngot %v\nwant %q", c.src, err, c.want)
		}
	}
	for _, ok := range []string{
		strings.Replace(fn, "%s", "kind: builder, qp_types: [RC, DCI], takes: [data, dc_addr], requires: [dc_addr]", 1),
		"segments:\n  - c: s\n    private: x.h\n    size: 8\n    fields: [{name: a, type: le16}, {name: b, type: u32, offset: 4}]\n",
		"man: x(3)\nfunctions:\n  - {name: f, kind: verb, returns: minus-one-errno, macro: ___f, inline: true}\n",
	} {
		if err := load(t, map[string]string{"a.yaml": ok}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
