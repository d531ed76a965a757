package wrcheck

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMkeyFastPathsInline checks that the common-case tests of the mkey
// calls stay inlined where they are called (-gcflags=-m): the builder's
// (builderOK, in mlx5dv_wr_mkey_configure and mlx5dv_wr_mr_*), the
// setters' (mkeySetter, in each of the four) and their count (counted).
// A change that makes one too costly to inline puts a call back on every
// configuration.
func TestMkeyFastPathsInline(t *testing.T) {
	want := map[string]int{"builderOK": 2, "mkeySetter": 4, "counted": 5}
	inlined(t, ".", "(*Chain).", want)
}

// inlined builds the package in dir with -gcflags=-m and checks that each
// function of want (a method name with prefix) is inlined at that many
// call sites at least.
func inlined(t *testing.T, dir, prefix string, want map[string]int) {
	t.Helper()
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gotool, "build", "-gcflags=-m", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m %s: %v\n%s", dir, err, out)
	}
	for fn, n := range want {
		if got := strings.Count(string(out), "inlining call to "+prefix+fn+"\n"); got < n {
			t.Errorf("%s%s is inlined at %d call sites, want %d", prefix, fn, got, n)
		}
	}
}
