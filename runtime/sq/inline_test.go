package sq

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMkeyFastPathsInline checks that the mkey path's common-case tests
// and stores stay inlined (-gcflags=-m): the ring's room (roomFor, in
// umrBegin, umrRoom and SetMkeyLayoutList), a finished configuration's
// size (umrNeed), the KLM stores (klms, in layoutList and
// writeTemplate), the bookkeeping of a WQE (book: the template writes
// two per configuration), and the checker's common cases of the access
// and list-layout setters (TryMkeyAccess; ListLayoutOK, TookListLayout)
// and of mlx5dv_wr_mkey_configure (MkeyConfigureOK, OpenMkey), and the
// runs of one-call forms (InRun, CountRun, OpenRun; in rdmaWriteSGE and
// postSGE) and of RDMAWrite and SetSGE (InRun, OpenPair and claimNext in
// rdmaWrite; InPair and ClosePair in SetSGE).
func TestMkeyFastPathsInline(t *testing.T) {
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	// rdma-core's architectures, whatever the test runs on (riscv64 and
	// loong64 lack the byte-swap intrinsics: there klms costs calls).
	for _, arch := range []string{"amd64", "arm64", "ppc64le", "s390x"} {
		cmd := exec.Command(gotool, "build", "-gcflags=-m", ".")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOARCH=%s go build -gcflags=-m: %v\n%s", arch, err, out)
		}
		for fn, n := range map[string]int{"(*SQ).roomFor": 3, "umrNeed": 2, "(*SQ).klms": 2, "(*SQ).claim": 2, "(*SQ).book": 5,
			"wrcheck.(*Chain).TryMkeyAccess": 1, "wrcheck.(*Chain).ListLayoutOK": 1, "wrcheck.(*Chain).TookListLayout": 1,
			"wrcheck.(*Chain).MkeyConfigureOK": 1, "wrcheck.(*Chain).OpenMkey": 1,
			"wrcheck.(*Chain).InRun": 3, "wrcheck.(*Chain).CountRun": 2, "wrcheck.(*Chain).OpenRun": 2, "(*SQ).claimNext": 1,
			"wrcheck.(*Chain).OpenPair": 2, "wrcheck.(*Chain).InPair": 1, "wrcheck.(*Chain).ClosePair": 1} {
			if got := strings.Count(string(out), "inlining call to "+fn+"\n"); got < n {
				t.Errorf("GOARCH=%s: %s is inlined at %d call sites, want %d", arch, fn, got, n)
			}
		}
		// The poller's hand-off, inlined where a program calls it.
		for _, fn := range []string{"(*SQ).Completed", "(*SQ).Retire", "(*SQ).Outstanding"} {
			if !strings.Contains(string(out), "can inline "+fn+"\n") {
				t.Errorf("GOARCH=%s: %s does not inline", arch, fn)
			}
		}
	}
}
