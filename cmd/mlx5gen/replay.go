package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// The replay and devices commands run the runtime, which runs on the
// generated package; the generator must build without both (a broken
// generated package must not block its own regeneration), so each is a
// program of its own that mlx5gen runs.
const (
	replayProgram = "mlx5gen-replay"
	replayDir     = "internal/cmd/mlx5gen-replay" // in the module
	replayPkg     = "github.com/mlx5gen/mlx5gen/" + replayDir
)

// delegate is a command mlx5gen runs as a program of its own.
type delegate struct {
	cmd     string // the mlx5gen command
	program string // the program's name
	dir     string // its directory in the module
	// help prints the program's usage, and says so, when args ask for it:
	// that is answered before the program is looked for.
	help func(args []string, stderr io.Writer) bool
}

func (d delegate) pkg() string { return "github.com/mlx5gen/mlx5gen/" + d.dir }

var (
	replayDelegate  = delegate{"replay", replayProgram, replayDir, replayHelp}
	devicesDelegate = delegate{"devices", "mlx5gen-devices", "internal/cmd/mlx5gen-devices", devicesHelp}
)

// replayHow is what replayCmd runs: a program, or a checkout to build it in.
type replayHow struct {
	program string // a built mlx5gen-replay
	root    string // else: the mlx5gen checkout to build it from
}

// replayEnv is what finding the program looks at (a variable for tests).
type replayEnv struct {
	executable func() (string, error) // this program's path
	getwd      func() (string, error)
	lookPath   func(string) (string, error)
}

var osReplayEnv = replayEnv{os.Executable, os.Getwd, exec.LookPath}

// find picks the program: the one installed next to mlx5gen (the same
// release), else the one of the mlx5gen checkout holding the current
// directory (so that a checkout replays its own code), else the one on
// PATH.
func (e replayEnv) find() (replayHow, error) { return e.findProgram(replayDelegate) }

// findProgram finds d's program as find does replay's.
func (e replayEnv) findProgram(d delegate) (replayHow, error) {
	if self, err := e.executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), d.program)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return replayHow{program: p}, nil
		}
	}
	if wd, err := e.getwd(); err == nil {
		if root, err := rdmacore.ModuleRoot(wd); err == nil {
			if st, err := os.Stat(filepath.Join(root, d.dir)); err == nil && st.IsDir() {
				return replayHow{root: root}, nil
			}
		}
	}
	if p, err := e.lookPath(d.program); err == nil {
		return replayHow{program: p}, nil
	}
	return replayHow{}, fmt.Errorf("%s runs %s, which is neither next to mlx5gen, nor in an mlx5gen checkout around the current directory, nor on PATH; "+
		"install it with: go install %s@latest (or run mlx5gen in a checkout of github.com/mlx5gen/mlx5gen)", d.cmd, d.program, d.pkg())
}

// replayCmd runs mlx5gen-replay with the arguments and returns its status;
// the program prints the usage, the verdicts and the errors itself.
func replayCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runDelegate(replayDelegate, args, stdin, stdout, stderr)
}

// devicesCmd runs mlx5gen-devices, which lists the RDMA devices.
func devicesCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runDelegate(devicesDelegate, args, stdin, stdout, stderr)
}

// runDelegate runs d's program with the arguments and returns its status.
func runDelegate(d delegate, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if d.help(args, stderr) {
		return 0
	}
	how, err := osReplayEnv.findProgram(d)
	if err != nil {
		return failf(stderr, "%v", err)
	}
	if how.program == "" {
		if how.program, err = buildProgram(d, how.root, stderr); err != nil {
			return failf(stderr, "%v", err)
		}
	}
	cmd := exec.Command(how.program, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	}
	return failf(stderr, "%s: %s: %v", d.cmd, how.program, err)
}

// buildProgram builds d's program (mlx5gen-replay, mlx5gen-devices) from the checkout at root into the
// user's cache (one binary per checkout), and returns its path. go build
// reuses the binary when nothing changed, so a second run does not link
// again. The go command's errors go to stderr.
func buildProgram(d delegate, root string, stderr io.Writer) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%s: building %s from the checkout %s needs the go command: %v", d.cmd, d.program, root, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%s: no cache directory for %s: %v", d.cmd, d.program, err)
	}
	sum := sha256.Sum256([]byte(root))
	out := filepath.Join(cache, "mlx5gen", hex.EncodeToString(sum[:8]), d.program)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("%s: %v", d.cmd, err)
	}
	build := exec.Command(goCmd, "build", "-o", out, "./"+d.dir)
	build.Dir = root
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("%s: building %s from the checkout %s: %v", d.cmd, d.program, root, err)
	}
	return out, nil
}
