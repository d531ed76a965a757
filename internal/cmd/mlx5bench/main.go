// Command mlx5bench measures every path of issue 14's performance table in
// one run and prints it as Markdown (docs/performance.md quotes it):
//
//	mlx5bench [-rounds 10] [-benchtime 200ms] [-gen-benchtime 2x] [-rows REGEXP] [-o FILE] [-json] [-rdma-core-src DIR]
//
// It builds each benchmark package's test binary once, then runs R rounds;
// a round runs every pair (mlx5gen and its C reference, in one process,
// back to back) once, from a fresh copy of its binary (a copy's page
// placement alone moved rows by up to 50%). A row's ratio is the median of
// its per-round ratios, so drift between rounds (other jobs on the
// machine, frequency changes, placements) cancels; the range of the
// per-round ratios shows the noise. Rows without
// a benchmark are printed as not measured, with the reason. The libmlx5
// rows measure libmlx5's own builders, built from the rdma-core tree of
// -rdma-core-src (libmlx5.go); without one they say how to get it.
// scripts/bench.sh runs it from the module root.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mlx5bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 12, "rounds (each runs every pair once)")
	bt := fs.String("benchtime", "200ms", "-test.benchtime of the post, encoder and poll benchmarks")
	gbt := fs.String("gen-benchtime", "2x", "-test.benchtime of BenchmarkGenerate")
	sel := fs.String("rows", "", "only the rows whose key matches this regular expression (keys: "+keys()+")")
	outFile := fs.String("o", "", "write the table to this file instead of stdout")
	update := fs.String("update", "", "comma-separated files whose <!-- bench:begin --> ... <!-- bench:end --> block gets the table (as well as the output)")
	cmdLine := fs.String("command", "", "the command line to print above the table (default: this one)")
	src := fs.String("rdma-core-src", "", "an rdma-core source tree (tag v44.0) to build libmlx5's builders from for the libmlx5 rows (default $"+srcEnv+")")
	asJSON := fs.Bool("json", false, "print (or -o) the rows as a JSON array instead of the Markdown table")
	placements := fs.Int("placements", 4, "placements of the libmlx5 harness's code (32 bytes apart) the rounds rotate through")
	samples := fs.Int("samples", 1, "runs of each benchmark a round (-test.count), the least kept: a busy machine only slows a run down")
	against := fs.String("against", "", "measure the libmlx5 rows in this tree and in this git revision, round by round, and print the change (runtime/sq in -placements placements)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *rounds < 1 || *samples < 1 || *placements < 1 || *placements > maxPlacements {
		fmt.Fprintf(stderr, "mlx5bench: usage: mlx5bench [flags]; -rounds and -samples must be at least 1, -placements from 1 to %d\n", maxPlacements)
		return 2
	}
	if *against != "" && (*update != "" || *asJSON) {
		fmt.Fprintln(stderr, "mlx5bench: -against prints its own table: no -update or -json with it")
		return 2
	}
	re, err := regexp.Compile(*sel)
	if err != nil {
		fmt.Fprintf(stderr, "mlx5bench: -rows: %v\n", err)
		return 2
	}
	if *cmdLine == "" {
		*cmdLine = strings.Join(append([]string{"go run ./internal/cmd/mlx5bench"}, args...), " ")
	}
	var rs []row
	for _, w := range rows {
		if re.MatchString(w.Key) {
			rs = append(rs, w)
		}
	}
	if len(rs) == 0 {
		fmt.Fprintf(stderr, "mlx5bench: -rows %q matches no row (keys: %s)\n", *sel, keys())
		return 2
	}
	var lb *libBuild
	if rs, lb, err = libRows(rs, treeSource(*src), stderr); err != nil {
		fmt.Fprintf(stderr, "mlx5bench: %v\n", err)
		return 1
	}
	var updates []string
	if *update != "" {
		updates = strings.Split(*update, ",")
		for _, n := range updates { // before the minutes of measuring, not after
			if doc, err := os.ReadFile(n); err != nil {
				fmt.Fprintf(stderr, "mlx5bench: -update: %v\n", err)
				return 2
			} else if _, err := replaceBlock(n, doc, nil); err != nil {
				fmt.Fprintf(stderr, "mlx5bench: -update: %v\n", err)
				return 2
			}
		}
	}
	o := output{cmdLine: *cmdLine, file: *outFile, updates: updates, json: *asJSON}
	if *against != "" {
		err = measureAgainst(rs, lb, plan{*rounds, *placements, *samples}, *bt, *against, o, stdout, stderr)
	} else {
		err = measure(rs, lb, plan{*rounds, *placements, *samples}, *bt, *gbt, o, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mlx5bench: %v\n", err)
		return 1
	}
	return 0
}

func keys() string {
	var ks []string
	for _, w := range rows {
		ks = append(ks, w.Key)
	}
	return strings.Join(ks, ", ")
}

// output says where the table goes.
type output struct {
	cmdLine, file string
	updates       []string // files whose bench block gets the Markdown table
	json          bool     // the output (stdout or file) is JSON
}

// libRows builds libmlx5 from src when a selected row needs it, or marks
// those rows as not measured, saying how to get a tree, when src is "".
func libRows(rs []row, src string, log io.Writer) ([]row, *libBuild, error) {
	need := false
	for _, w := range rs {
		need = need || w.Lib
	}
	if !need {
		return rs, nil, nil
	}
	if src == "" {
		out := append([]row(nil), rs...)
		for i := range out {
			if out[i].Lib {
				out[i].NotMeasured = noTreeWhy
			}
		}
		return out, nil, nil
	}
	lb, err := buildLib(src, log)
	return rs, lb, err
}

// plan is how many rounds a run measures, and in how many placements of
// their code the libmlx5 rows' rounds rotate (layout.go).
type plan struct{ rounds, placements, samples int }

// measure runs the rounds of n and writes the table.
func measure(rs []row, lb *libBuild, n plan, bt, gbt string, o output, stdout, stderr io.Writer) error {
	rounds := n.rounds
	root, tmp, err := benchDirs()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r := newRunner(root, tmp, rs)
	r.lib, r.samples = lb, n.samples
	if lb != nil {
		r.placements = n.placements
	}
	r.benchtime, r.genBenchtime = bt, gbt
	fmt.Fprintln(stderr, "mlx5bench: building the benchmark binaries")
	if err := r.build(); err != nil {
		return err
	}
	start, load := time.Now().UTC(), loadAvg()
	for i := range rounds {
		fmt.Fprintf(stderr, "mlx5bench: round %d of %d\n", i+1, rounds)
		if err := r.round(); err != nil {
			return err
		}
	}
	h := header{Date: start.Format("2006-01-02 15:04 UTC"), CPU: cpuModel(), Cores: runtime.NumCPU(),
		GoVersion: goEnv("GOVERSION"), GOAMD64: goEnv("GOAMD64"), Command: o.cmdLine, Rounds: rounds, Load: load,
		Benchtime: bt, GenBenchtime: gbt, Placements: r.placements, Samples: r.samples}
	var md bytes.Buffer
	writeTable(&md, h, rs, r)
	if len(o.updates) > 0 {
		if err := updateFiles(o.updates, md.Bytes()); err != nil {
			return err
		}
	}
	out := md.Bytes()
	if o.json {
		if out, err = jsonRows(rs, r); err != nil {
			return err
		}
	}
	return o.emit(stdout, out)
}

// benchDirs is the module's root and a new temporary directory for a
// run's binaries, which the caller removes.
func benchDirs() (root, tmp string, err error) {
	if root, err = rdmacore.ModuleRoot("."); err != nil {
		return "", "", err
	}
	tmp, err = os.MkdirTemp("", "mlx5bench")
	return root, tmp, err
}

// emit writes a run's output to the -o file, or to stdout.
func (o output) emit(stdout io.Writer, out []byte) error {
	if o.file != "" {
		return os.WriteFile(o.file, out, 0o644)
	}
	_, err := stdout.Write(out)
	return err
}

// cpuModel is /proc/cpuinfo's first "model name" (absent on some
// architectures: then GOARCH).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(l, ":")
			if ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU (" + runtime.GOARCH + ")"
}

// goEnv is `go env NAME`: the toolchain that built the benchmarks.
func goEnv(name string) string {
	b, err := exec.Command("go", "env", name).Output()
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return "?"
	}
	return string(bytes.TrimSpace(b))
}

// loadAvg is the 1-minute load average, "?" where /proc has none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
