package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestOutputOnDevFull: every command whose output cannot be written
// (standard output, or standard error for -h, on /dev/full) exits 1, and
// with stdout on /dev/full says so on stderr.
func TestOutputOnDevFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	h44, err := rdmacore.IncludeRoot(root, "44.0")
	if err != nil {
		t.Fatal(err)
	}
	const wqe = "00000008001234030000000800000000010203040506070811223344000000000000100055667788111213141516171800000000000000000000000000000000"
	const cqe = "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000881308000055000000d1"
	out := t.TempDir()
	for _, args := range [][]string{
		{"version"},
		{"-h"},
		{"wqe", "-h"},
		{"names", "-I", h44, "mlx5_wqe_ctrl_seg"},
		{"wqe", "decode", "-I", h44, wqe},
		{"cqe", "decode", "-I", h44, cqe},
		{"check", "-I", h44},
		{"generate", "-I", h44, "-out", out},
		{"generate", "-I", h44, "-out", out}, // unchanged: the summary only
		{"diff", h44, h44},
		{"diff", "-json", h44, h44},
	} {
		var stderr bytes.Buffer
		if st := run(args, strings.NewReader(""), full, &stderr); st != 1 {
			t.Errorf("%q with stdout on /dev/full: status %d, want 1 (stderr %q)", args, st, stderr.String())
		}
		if !strings.Contains(stderr.String(), "mlx5gen: writing standard output: ") {
			t.Errorf("%q with stdout on /dev/full: stderr %q does not say the output failed", args, stderr.String())
		}
	}
	for _, args := range [][]string{{"generate", "-h"}, {"version", "-h"}, {"replay", "-h"}, {"devices", "-h"}, {}} {
		var stdout bytes.Buffer
		if st := run(args, strings.NewReader(""), &stdout, full); st == 0 {
			t.Errorf("%q with stderr on /dev/full: status 0", args)
		}
	}
	// The same commands succeed when the output can be written.
	var stdout, stderr bytes.Buffer
	if st := run([]string{"version"}, nil, &stdout, &stderr); st != 0 || stdout.Len() == 0 {
		t.Errorf("version: status %d, stdout %q, stderr %q", st, stdout.String(), stderr.String())
	}
}

// TestDelegateHelpWithoutProgram: replay -h and devices -h print the usage
// and exit 0 where neither program can be found (outside a checkout, none
// installed), while running them fails there.
func TestDelegateHelpWithoutProgram(t *testing.T) {
	dir := t.TempDir()
	saved := osReplayEnv
	t.Cleanup(func() { osReplayEnv = saved })
	osReplayEnv = replayEnv{
		executable: func() (string, error) { return filepath.Join(dir, "mlx5gen"), nil },
		getwd:      func() (string, error) { return dir, nil },
		lookPath:   func(string) (string, error) { return "", errors.New("not found") },
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "-h"}, "usage: mlx5gen replay"},
		{[]string{"replay", "-v", "--help"}, "usage: mlx5gen replay"},
		{[]string{"devices", "-h"}, "usage: mlx5gen devices"},
		{[]string{"devices", "-help"}, "usage: mlx5gen devices"},
	} {
		var stdout, stderr bytes.Buffer
		if st := run(c.args, nil, &stdout, &stderr); st != 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: status %d, stderr %q; want 0 and %q", c.args, st, stderr.String(), c.want)
		}
	}
	for _, args := range [][]string{{"replay", "x.json"}, {"devices"}} {
		var stdout, stderr bytes.Buffer
		if st := run(args, nil, &stdout, &stderr); st != 1 || !strings.Contains(stderr.String(), "neither next to mlx5gen") {
			t.Errorf("%q without the program: status %d, stderr %q", args, st, stderr.String())
		}
	}
}
