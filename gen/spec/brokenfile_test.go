package spec

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// TestBrokenFileBlamedAlone: a file that does not decode (one unknown
// key) is the only file blamed for it. What it describes is unknown to
// the rest of the spec, so no reference from another file is reported as
// "not described" (issue 22: one unknown key in ibv_reg_mr.yaml also
// blamed ibv_open_device.yaml for ibv_create_ah); another file's own
// errors still are.
func TestBrokenFileBlamedAlone(t *testing.T) {
	real := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS("../.."), "spec", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := fs.ReadFile(os.DirFS("../.."), p)
		if p == "spec/api/ibv_reg_mr.yaml" {
			b = append([]byte("colour: red\n"), b...)
		}
		real[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	small := fstest.MapFS{
		"spec/a.yaml": {Data: []byte("man: a(3)\ncolour: red\nfunctions:\n  - {name: f, kind: verb, returns: errno, params: [{name: p, type: int}]}\nstructs:\n  - name: s\n    fields: [{name: x, type: int}]\n")},
		"spec/b.yaml": {Data: []byte("man: b(3)\nrules:\n" +
			"  - {id: b.one, section: S, says: s, kind: argument, errno: EINVAL, funcs: [f], check: {struct: s, field: x, max: 1}, tests: {good: {}, bad: {}}}\n" +
			"  - {id: b.two, section: S, says: s, kind: argument, errno: EINVAL, funcs: [f], check: {func: f, param: p, max: 1}, tests: {good: {}, bad: {}}}\n" +
			"  - {id: b.three, section: S, says: s, kind: argument, errno: EINVAL, funcs: [g], check: {struct: s, field: x, max: 1}, tests: {good: {}, bad: {}}}\n" +
			"  - {id: b.four, section: S, says: s, kind: argument, errno: EBOGUS, funcs: [f], check: {struct: s, field: x, max: 1}, tests: {good: {}, bad: {}}}\n")},
	}
	for _, c := range []struct {
		name, file string
		fsys       fs.FS
		also       string // an error of another file's own, still reported
	}{
		{"the real spec", "spec/api/ibv_reg_mr.yaml:1:1: unknown key \"colour\"", real, ""},
		{"struct, function and parameter of the broken file", "spec/a.yaml:2:1: unknown key \"colour\"", small, "spec/b.yaml:6:5: rule b.four: errno must be one of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.fsys, "spec", "spec")
			if err == nil {
				t.Fatal("loaded")
			}
			lines := strings.Split(err.Error(), "\n")
			if !strings.Contains(lines[0], c.file) {
				t.Errorf("first error %q, want %q", lines[0], c.file)
			}
			blamed := strings.SplitN(c.file, ":", 2)[0]
			for _, l := range lines {
				if !strings.HasPrefix(l, blamed+":") && (c.also == "" || !strings.HasPrefix(l, c.also)) {
					t.Errorf("an error of another file: %q", l)
				}
			}
			if c.also != "" && !strings.Contains(err.Error(), c.also) {
				t.Errorf("%q: the other file's own error %q is missing", err, c.also)
			}
		})
	}
}
