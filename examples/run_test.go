// Package examples_test runs every example's main as its documentation
// tells a reader to (go run ./examples/NAME), so that the commands the
// README and the examples' docs quote keep working.
package examples_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// wantOut is what each example prints on its default (simulated) device.
// A new example needs its line here: TestGoRun fails for one without.
var wantOut = map[string]*regexp.Regexp{
	"rdmawrite": regexp.MustCompile(`(?m)^wr_id 1: IBV_WC_RDMA_WRITE: "hello, RDMA"\n\z`),
	"pingpong":  regexp.MustCompile(`(?m)^1000 round trips between sim:ping and sim:pong: [0-9.]+[µnm]?s each\n\z`),
	"sendrecv": regexp.MustCompile(`(?m)^receive 0: 5 bytes "hello"\n` +
		`receive 1: 9 bytes "two-sided"\n` +
		`receive 2: 19 bytes "with immediate data", immediate data 42\n\z`),
	"t10dif": regexp.MustCompile(`(?m)^2 protected blocks written, checked and stripped\n` +
		`corrupted block: MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, expected guard 0xd0bc, actual 0x77f9, at wire offset 4104\n\z`),
}

// examples lists the directories of examples/ with a main.go.
func examples(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob(filepath.Join("*", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("no examples/*/main.go (%v)", err)
	}
	var names []string
	for _, m := range mains {
		names = append(names, filepath.Dir(m))
	}
	return names
}

// goRun runs go run ./examples/name args... from the module's root and
// returns its standard output, standard error and exit status.
func goRun(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.CommandContext(ctx, gotool, append([]string{"run", "./examples/" + name}, args...)...)
	cmd.Dir = ".."
	cmd.Env = os.Environ()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("go run ./examples/%s: %v\n%s", name, err, e.String())
	}
	return o.String(), e.String(), code
}

// TestGoRun: each example, run with no flag, opens the simulator, prints
// what it did and exits 0.
func TestGoRun(t *testing.T) {
	for _, name := range examples(t) {
		t.Run(name, func(t *testing.T) {
			want, ok := wantOut[name]
			if !ok {
				t.Fatalf("examples/%s has no expected output in wantOut", name)
			}
			out, errOut, code := goRun(t, name)
			if code != 0 || !want.MatchString(out) {
				t.Fatalf("go run ./examples/%s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stdout matching %s", name, code, out, errOut, want)
			}
		})
	}
}

// TestGoRunHardware: with -device mlx5_0 each example reaches the
// hardware backend (imported by its main), which finds no device on a
// machine without RDMA (or says it needs cgo): exit 1 with that error,
// never "no device backend registered".
func TestGoRunHardware(t *testing.T) {
	for _, name := range examples(t) {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := goRun(t, name, "-device", "mlx5_0")
			if code == 0 {
				t.Skipf("an RDMA device answered: %s", out) // the hardware run is the simulator test's twin
			}
			if strings.Contains(errOut, "no device backend registered") ||
				!regexp.MustCompile(`no RDMA device|verbs: `).MatchString(errOut) {
				t.Fatalf("go run ./examples/%s -device mlx5_0: exit %d, stderr:\n%s\nwant the hardware backend's error", name, code, errOut)
			}
		})
	}
}
