package lint

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTracked is the largest file the repository keeps outside testdata/
// and golden/: anything bigger is data or a build artefact.
const maxTracked = 1 << 20

// binaryMagic are the first bytes of executables and object files: ELF,
// Mach-O (32/64-bit, both byte orders, universal) and PE (MZ).
var binaryMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// TestNoTrackedArtefacts: git tracks no executable or object file, and
// nothing over 1 MiB outside testdata/ and golden/ (a built command
// committed by mistake, say).
func TestNoTrackedArtefacts(t *testing.T) {
	root := moduleRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v (the test runs in a git checkout)", root, err)
	}
	checked := 0
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		checked++
		path := filepath.Join(root, filepath.FromSlash(name))
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, m := range binaryMagic {
			if bytes.HasPrefix(data, m) {
				t.Errorf("%s is an executable or object file (starts % x): build artefacts are not committed", name, m)
				break
			}
		}
		top, _, _ := strings.Cut(name, "/")
		if len(data) > maxTracked && top != "testdata" && top != "golden" && !strings.Contains(name, "/testdata/") {
			t.Errorf("%s is %d bytes, over %d outside testdata/ and golden/", name, len(data), maxTracked)
		}
	}
	if checked == 0 {
		t.Fatal("git ls-files listed nothing")
	}
}
