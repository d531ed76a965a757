package gen_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/emit"
)

// The test binary re-executed as a generator run (TestWriteHelper) writes
// variant's output under root, exiting (a kill) after exitAfter
// operations when it is set.
const (
	helperRoot    = "MLX5GEN_TEST_WRITE_ROOT"
	helperVariant = "MLX5GEN_TEST_WRITE_VARIANT"
	helperExit    = "MLX5GEN_TEST_WRITE_EXIT_AFTER"
	helperRepair  = "MLX5GEN_TEST_WRITE_REPAIR" // run Repair only
	killedStatus  = 9
)

// variant is a run's output: a and b differ in every file, b removes c.go
// and adds d.go, and both write a second package and a rules table.
func variant(root, v string) gen.Output {
	file := func(name string) emit.File {
		return emit.File{Name: name, Content: []byte(goMarker + "package p // " + v + " " + name + "\n")}
	}
	o := gen.Output{
		Dir:          filepath.Join(root, "out"),
		Files:        []emit.File{file("a.go"), file("b.go"), file("c.go")},
		Rules:        filepath.Join(root, "RULES.md"),
		RulesContent: []byte(rulesHeader + v + " rules\n"),
		More:         []gen.Package{{Dir: filepath.Join(root, "more"), Files: []emit.File{file("m.go")}}},
	}
	if v == "b" {
		o.Files[2] = file("d.go")
		o.More[0].Files = append(o.More[0].Files, file("n.go"))
	}
	return o
}

// TestMain runs the test binary as one generate run (writeHelper) when
// TestWriteKilled or TestWriteConcurrent start it so, else the tests.
func TestMain(m *testing.M) {
	if root := os.Getenv(helperRoot); root != "" {
		writeHelper(root)
	}
	os.Exit(m.Run())
}

// writeHelper writes variant helperVariant under root, exiting after
// helperExit file operations when that is set (a kill), and exits.
func writeHelper(root string) {
	var fsys gen.FS = gen.OS
	if n, err := strconv.Atoi(os.Getenv(helperExit)); err == nil {
		fsys = &killFS{FS: gen.OS, exitAfter: n}
	}
	o := variant(root, os.Getenv(helperVariant))
	var err error
	if os.Getenv(helperRepair) != "" {
		_, err = gen.Repair(fsys, o)
	} else {
		_, err = gen.WriteOutput(fsys, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// run starts the test binary as a run writing variant v under root.
func run(root, v string, exitAfter int, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), helperRoot+"="+root, helperVariant+"="+v), env...)
	if exitAfter > 0 {
		cmd.Env = append(cmd.Env, helperExit+"="+strconv.Itoa(exitAfter))
	}
	return cmd
}

// killFS exits the process right after its exitAfter'th change, as a
// kill at that point would leave the tree.
type killFS struct {
	gen.FS
	n, exitAfter int
}

func (k *killFS) done() {
	if k.n++; k.n == k.exitAfter {
		os.Exit(killedStatus)
	}
}

func (k *killFS) Mkdir(name string, perm fs.FileMode) error {
	defer k.done()
	return k.FS.Mkdir(name, perm)
}

func (k *killFS) Rename(o, n string) error { defer k.done(); return k.FS.Rename(o, n) }
func (k *killFS) Remove(name string) error { defer k.done(); return k.FS.Remove(name) }
func (k *killFS) SyncDir(name string) error {
	defer k.done()
	return k.FS.SyncDir(name)
}

func (k *killFS) CreateTemp(dir, pattern string) (gen.TempFile, error) {
	defer k.done()
	f, err := k.FS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &killFile{TempFile: f, k: k}, nil
}

type killFile struct {
	gen.TempFile
	k *killFS
}

func (f *killFile) Write(b []byte) (int, error) { defer f.k.done(); return f.TempFile.Write(b) }
func (f *killFile) Sync() error                 { defer f.k.done(); return f.TempFile.Sync() }
func (f *killFile) Close() error                { defer f.k.done(); return f.TempFile.Close() }

// tree is the snapshot of what variant v writes into an empty root.
func tree(t *testing.T, v string) map[string]string {
	root := t.TempDir()
	if _, err := gen.WriteOutput(gen.OS, variant(root, v)); err != nil {
		t.Fatal(err)
	}
	return snapshot(t, root)
}

// TestWriteKilled kills a run over a's output after each of its
// operations in turn; the next run (Repair) leaves a's tree or b's, byte
// for byte, with no temporary file or journal, and both outcomes occur.
func TestWriteKilled(t *testing.T) {
	oldTree, newTree := tree(t, "a"), tree(t, "b")
	outcomes := map[string]int{}
	for n := 1; ; n++ {
		if n > 500 {
			t.Fatal("the run never finished")
		}
		root := t.TempDir()
		if _, err := gen.WriteOutput(gen.OS, variant(root, "a")); err != nil {
			t.Fatal(err)
		}
		out, err := run(root, "b", n).CombinedOutput()
		if err == nil {
			t.Logf("%d operations, a kill after each; outcomes %v", n-1, outcomes)
			break
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != killedStatus {
			t.Fatalf("kill after %d: %v\n%s", n, err, out)
		}
		did, err := gen.Repair(gen.OS, variant(root, "b"))
		if err != nil {
			t.Fatalf("kill after %d: repair: %v", n, err)
		}
		got := snapshot(t, root)
		switch {
		case diffSnap(oldTree, got) == "":
			outcomes["old"]++
		case diffSnap(newTree, got) == "":
			outcomes["new"]++
		default:
			t.Fatalf("kill after %d, then %q: neither tree:\nfrom the old:\n%s\nfrom the new:\n%s", n, did, diffSnap(oldTree, got), diffSnap(newTree, got))
		}
		// A later run writes its own tree over whatever was left.
		if _, err := gen.WriteOutput(gen.OS, variant(root, "a")); err != nil {
			t.Fatalf("kill after %d: the next run: %v", n, err)
		}
		if d := diffSnap(oldTree, snapshot(t, root)); d != "" {
			t.Fatalf("kill after %d: the next run left:\n%s", n, d)
		}
	}
	if outcomes["old"] == 0 || outcomes["new"] == 0 {
		t.Errorf("outcomes %v: a kill must leave the old tree before the journal and the new one after", outcomes)
	}
}

// TestRepairKilled kills the repair of a killed commit in turn after
// each of its own operations; the repair after that (the next run's)
// still leaves the tree the first repair was heading for, byte for byte,
// with no temporary file. A kill with the journal in place rolls forward
// (every staged file is there): b's tree. With a staged file lost as
// well (a tool removing dot files, a crash before it was synced) the
// repair rolls back: a's tree.
func TestRepairKilled(t *testing.T) {
	trees := map[bool]map[string]string{false: tree(t, "a"), true: tree(t, "b")}
	// setup leaves a's tree with b's commit killed after n operations,
	// and a staged file of it removed when lose is set; it reports
	// whether a journal is left and whether a staged file was.
	setup := func(n int, lose bool) (string, bool, bool) {
		root := t.TempDir()
		if _, err := gen.WriteOutput(gen.OS, variant(root, "a")); err != nil {
			t.Fatal(err)
		}
		if err := run(root, "b", n).Run(); err == nil {
			return root, false, false
		}
		_, err := os.Lstat(filepath.Join(root, "out", gen.JournalName))
		staged, _ := filepath.Glob(filepath.Join(root, "*", ".*.mlx5gen-new-*"))
		rules, _ := filepath.Glob(filepath.Join(root, ".*.mlx5gen-new-*")) // -rules
		staged = append(staged, rules...)
		if lose && len(staged) > 0 {
			if err := os.Remove(staged[0]); err != nil {
				t.Fatal(err)
			}
		}
		return root, err == nil, len(staged) > 0
	}
	var journalled []int
	for n := 1; n < 500; n++ {
		if _, j, _ := setup(n, false); j {
			journalled = append(journalled, n)
		} else if len(journalled) > 0 {
			break
		}
	}
	if len(journalled) < 3 {
		t.Fatalf("kills leaving a journal: %v", journalled)
	}
	repairs := map[string]int{}
	for _, n := range []int{journalled[0], journalled[len(journalled)/2], journalled[len(journalled)-1]} {
		for _, lose := range []bool{false, true} {
			if _, _, staged := setup(n, false); lose && !staged {
				continue // every staged file already in place
			}
			for m := 1; ; m++ {
				if m > 500 {
					t.Fatal("the repair never finished")
				}
				root, _, _ := setup(n, lose)
				err := run(root, "b", m, helperRepair+"=1").Run()
				if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != killedStatus) {
					t.Fatalf("commit killed after %d, repair after %d: %v", n, m, err)
				}
				if _, err := gen.Repair(gen.OS, variant(root, "b")); err != nil {
					t.Fatalf("commit killed after %d, repair after %d: the next repair: %v", n, m, err)
				}
				if d := diffSnap(trees[!lose], snapshot(t, root)); d != "" {
					t.Fatalf("commit killed after %d (a staged file lost: %v), repair after %d: not the tree it was heading for:\n%s", n, lose, m, d)
				}
				repairs[map[bool]string{false: "forward", true: "back"}[lose]]++
				if err == nil {
					break // the repair ran to its end
				}
			}
		}
	}
	t.Logf("commit kills %v; repairs killed and finished: %v", journalled, repairs)
	if repairs["forward"] == 0 || repairs["back"] == 0 {
		t.Errorf("repairs %v: want both rolling forward and back", repairs)
	}
}

// TestWriteConcurrent runs a and b into one root at once, many times
// over: both succeed (the second waits for the lock) and the tree is one
// run's whole output.
func TestWriteConcurrent(t *testing.T) {
	trees := map[string]map[string]string{"a": tree(t, "a"), "b": tree(t, "b")}
	root := t.TempDir()
	seen := map[string]int{}
	deadline := time.Now().Add(20 * time.Second)
	for round := 0; round < 12 && time.Now().Before(deadline); round++ {
		var wg sync.WaitGroup
		errs := make([]string, 4)
		for i, v := range []string{"a", "b", "a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if out, err := run(root, v, 0).CombinedOutput(); err != nil {
					errs[i] = fmt.Sprintf("run %s: %v\n%s", v, err, out)
				}
			}()
		}
		wg.Wait()
		if e := strings.Join(errs, ""); e != "" {
			t.Fatalf("round %d: %s", round, e)
		}
		got := snapshot(t, root)
		switch {
		case diffSnap(trees["a"], got) == "":
			seen["a"]++
		case diffSnap(trees["b"], got) == "":
			seen["b"]++
		default:
			t.Fatalf("round %d: a mix:\nfrom a:\n%s\nfrom b:\n%s", round, diffSnap(trees["a"], got), diffSnap(trees["b"], got))
		}
	}
	t.Logf("final trees: %v", seen)
}

// TestWriteLockTimeout: a run that cannot get the lock in time fails
// naming the lock and the other run, and changes nothing.
func TestWriteLockTimeout(t *testing.T) {
	root := t.TempDir()
	if _, err := gen.WriteOutput(gen.OS, variant(root, "a")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	holder, err := os.Open(filepath.Join(root, "out", gen.LockName))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := flock(holder); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { gen.LockTimeout = d }(gen.LockTimeout)
	gen.LockTimeout = 300 * time.Millisecond
	o := variant(root, "b")
	var told string
	o.Wait = func(lock string) { told = lock }
	_, err = gen.WriteOutput(gen.OS, o)
	if err == nil || !strings.Contains(err.Error(), "another mlx5gen run is writing") || !strings.Contains(err.Error(), gen.LockName) {
		t.Fatalf("got %v; want the lock's timeout", err)
	}
	if !strings.HasSuffix(told, gen.LockName) {
		t.Errorf("Wait was told %q", told)
	}
	if d := diffSnap(before, snapshot(t, root)); d != "" {
		t.Errorf("changed:\n%s", d)
	}
}
