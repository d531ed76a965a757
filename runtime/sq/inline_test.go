package sq

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMkeyFastPathsInline checks that the mkey path's common-case tests
// and stores stay inlined (-gcflags=-m): the ring's room (roomFor, in
// umrBegin, umrRoom and SetMkeyLayoutList), a finished configuration's
// size (umrNeed) and the KLM stores (klms, in layoutList and
// writeTemplate).
func TestMkeyFastPathsInline(t *testing.T) {
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gotool, "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for fn, n := range map[string]int{"(*SQ).roomFor": 3, "umrNeed": 2, "(*SQ).klms": 2} {
		if got := strings.Count(string(out), "inlining call to "+fn+"\n"); got < n {
			t.Errorf("%s is inlined at %d call sites, want %d", fn, got, n)
		}
	}
}
