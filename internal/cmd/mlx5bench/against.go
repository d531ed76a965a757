package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
)

// -against REV measures the libmlx5 rows in this tree and in git revision
// REV in one run, round by round, to say what a change does: each round
// runs both sides back to back (which goes first alternates), and the
// change is the median of the per-round quotients of their ratios to
// libmlx5. A change to runtime/sq moves the code after it, and where code
// lands moves a row by a few percent (layout.go), so both sides are built
// in -placements placements of runtime/sq (runtimePad), round i in
// placement i mod -placements: a change is told from a placement's draw
// only when it holds across placements.

// worktree checks out rev (any git revision naming a commit) of the
// repository at root into a new directory under tmp, and returns it with
// the function that removes it.
func worktree(root, rev, tmp string) (string, func(), error) {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		return cmd.CombinedOutput()
	}
	if out, err := git("rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return "", nil, fmt.Errorf("-against %s: not a commit of %s (%v) %s", rev, root, err, strings.TrimSpace(string(out)))
	}
	dir := filepath.Join(tmp, "against")
	if out, err := git("worktree", "add", "--detach", dir, rev); err != nil {
		return "", nil, fmt.Errorf("-against %s: git worktree add: %v\n%s", rev, err, out)
	}
	return dir, func() { git("worktree", "remove", "--force", dir) }, nil
}

// againstRows are the rows -against measures: the libmlx5 rows with a
// figure, not their PGO twins (a profile of each side would differ).
func againstRows(rs []row) []row {
	var out []row
	for _, w := range rs {
		if w.Lib && !w.PGO && w.NotMeasured == "" {
			out = append(out, w)
		}
	}
	return out
}

// measureAgainst builds and runs both sides and writes the comparison.
func measureAgainst(rs []row, lb *libBuild, n plan, bt, rev string, o output, stdout, stderr io.Writer) error {
	rs = againstRows(rs)
	if len(rs) == 0 || lb == nil {
		return fmt.Errorf("-against measures the libmlx5 rows: give an rdma-core tree (-rdma-core-src) and -rows that select some")
	}
	root, tmp, err := benchDirs()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	wt, remove, err := worktree(root, rev, tmp)
	if err != nil {
		return err
	}
	defer remove()
	// An interrupt (^C) reaches the benchmark or build running in the
	// foreground too: that one fails, and the run returns its error
	// through the deferred removals instead of dying with a worktree
	// registered in the repository.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	var sides [2]*runner
	for i, dir := range []string{root, wt} {
		r := newRunner(dir, filepath.Join(tmp, fmt.Sprint(i)), rs)
		if err := os.Mkdir(r.tmp, 0o755); err != nil {
			return err
		}
		r.lib, r.benchtime, r.placements, r.pad, r.samples = lb, bt, n.placements, runtimePad, n.samples
		fmt.Fprintf(stderr, "mlx5bench: building %s\n", []string{"this tree", rev}[i])
		if err := r.build(); err != nil {
			return fmt.Errorf("%s: %w", []string{"this tree", rev}[i], err)
		}
		sides[i] = r
	}
	for i := range n.rounds {
		fmt.Fprintf(stderr, "mlx5bench: round %d of %d\n", i+1, n.rounds)
		for k := range 2 {
			if err := sides[(i+k)%2].round(); err != nil {
				return err
			}
		}
	}
	var b bytes.Buffer
	writeAgainst(&b, o.cmdLine, rev, rs, sides)
	return o.emit(stdout, b.Bytes())
}

// writeAgainst prints each row's median ratio to libmlx5 on both sides
// and the change: the median of the per-round quotients (this tree's
// ratio over rev's), with their range.
func writeAgainst(w io.Writer, cmdLine, rev string, rs []row, sides [2]*runner) {
	fmt.Fprintf(w, "This tree against %s, %d rounds (each benchmark the least of %d runs), runtime/sq in %d placements:\n\n    %s\n\n", rev,
		len(sides[0].vals[rs[0].Key]), sides[0].samples, sides[0].placements, cmdLine)
	fmt.Fprintf(w, "| row | this tree | %s | this tree ÷ %s (median of rounds) | range |\n| --- | --- | --- | --- | --- |\n", rev, rev)
	for _, x := range rs {
		var ratios [2][]float64
		for i, s := range sides {
			for j, v := range s.vals[x.Key] {
				ratios[i] = append(ratios[i], v/s.refs[x.Key][j])
			}
		}
		var q []float64
		for j := range min(len(ratios[0]), len(ratios[1])) {
			q = append(q, ratios[0][j]/ratios[1][j])
		}
		lo, hi := nan(), nan()
		if len(q) > 0 {
			lo, hi = slices.Min(q), slices.Max(q)
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s–%s |\n", x.Key, fmtRatio(median(ratios[0])), fmtRatio(median(ratios[1])),
			fmtQuot(median(q)), fmtQuot(lo), fmtQuot(hi))
	}
}

// fmtQuot prints a quotient of ratios to three places: changes of 1–2%
// are what -against is for.
func fmtQuot(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.3f", x)
}
