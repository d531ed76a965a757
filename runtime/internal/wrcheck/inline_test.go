package wrcheck

import (
	"os"
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
	// The generated validators of the builders' arguments, through their
	// common case (gen/emit: a validator of few cheap rules tests them in
	// one inlinable condition before the checks one by one).
	inlined(t, ".", "mlx5dv.", map[string]int{"ValidateArgsWRMkeyConfigureInto": 1, "(*MkeyConfAttr).ValidateInto": 1,
		"ValidateArgsWRMRListInto": 1, "ValidateArgsWRMRInterleavedInto": 1})
}

// rdmaArches are the architectures rdma-core ships for, whose inlining the
// fast paths are written for: the check builds for each of them, whatever
// the test runs on (riscv64 and loong64, under qemu in CI, lack the
// byte-swap intrinsics, so there the stores cost a call and do not
// inline; they stay correct, which their own tests check).
var rdmaArches = []string{"amd64", "arm64", "ppc64le", "s390x"}

// inlined builds the package in dir for each of rdmaArches with -gcflags=-m
// and checks that each function of want (a method name with prefix) is
// inlined at that many call sites at least.
func inlined(t *testing.T, dir, prefix string, want map[string]int) {
	t.Helper()
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, arch := range rdmaArches {
		cmd := exec.Command(gotool, "build", "-gcflags=-m", dir)
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOARCH=%s go build -gcflags=-m %s: %v\n%s", arch, dir, err, out)
		}
		for fn, n := range want {
			if got := strings.Count(string(out), "inlining call to "+prefix+fn+"\n"); got < n {
				t.Errorf("GOARCH=%s: %s%s is inlined at %d call sites, want %d", arch, prefix, fn, got, n)
			}
		}
	}
}
