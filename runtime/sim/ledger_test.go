package sim_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLedger checks docs/simulator.md's fidelity ledger against the
// comments of runtime/sim's non-test Go code (ledger_check_test.go says
// what is checked). A failure names the file and line, and the id.
func TestLedger(t *testing.T) {
	doc, err := os.ReadFile("../../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	var srcs []ledgerFile
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		srcs = append(srcs, ledgerFile{name: "runtime/sim/" + filepath.ToSlash(path), text: string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) < 20 {
		t.Fatalf("found %d Go files under runtime/sim: is the test running in its package directory?", len(srcs))
	}
	for _, p := range checkLedger(ledgerFile{name: "docs/simulator.md", text: string(doc)}, srcs) {
		t.Error(p)
	}
}

// ledgerDoc builds a small simulator.md around table rows.
func ledgerDoc(rows ...string) string {
	return "# Sim\n\nprose | with a bar\n\n" + ledgerHeading + "\n\n### Area\n\n| id | behaviour | source | confidence |\n| --- | --- | --- | --- |\n" +
		strings.Join(rows, "\n") + "\n\n## After\n\n| not-a-row | x | y | z |\n"
}

// TestLedgerChecker shows the checker fails on each kind of broken input,
// naming file:line and the id, and passes a consistent one.
func TestLedgerChecker(t *testing.T) {
	good := "| rnr-wait | waits | ibv_modify_qp(3) | documented |"
	docOnly := "| doc-no-ud | UD QPs are refused | ibv_create_qp(3) | documented |"
	tagged := "package x\n\n// RNR: the sender waits [ledger: rnr-wait].\nfunc f() {}\n"
	cases := []struct {
		name string
		doc  string
		src  string
		want [][]string // each: substrings one problem must hold together
	}{
		{"consistent", ledgerDoc(good, docOnly), tagged, nil},
		{"two ids in one tag, a tag across lines", ledgerDoc(good, "| b-c | x | none | guessed |"),
			"package x\n\n// Both [ledger:\n// rnr-wait, b-c].\nvar v int\n", nil},
		{"tag names no row", ledgerDoc(good), tagged + "\n// Chosen here [ledger: nowhere].\nvar v int\n",
			[][]string{{"a.go:6:", "[ledger: nowhere]", "names no row"}}},
		{"bad confidence", ledgerDoc("| rnr-wait | waits | ibv_modify_qp(3) | likely |"), tagged,
			[][]string{{"sim.md:11:", "[rnr-wait]", `confidence "likely"`}}},
		{"empty source and behaviour", ledgerDoc("| rnr-wait |  |  | inferred |"), tagged,
			[][]string{{"sim.md:11:", "[rnr-wait] has no source"}, {"sim.md:11:", "[rnr-wait] has no behaviour"}}},
		{"untagged choice", ledgerDoc(good), tagged + "\n// Tagged [ledger: rnr-wait].\n//\n// The byte order is\n// guessed from nothing.\nvar v int\n",
			[][]string{{"a.go:9:", `states a choice ("guessed")`}}},
		{"untagged list item", ledgerDoc(good), tagged + "\n// Items:\n//   - one [ledger: rnr-wait]\n//   - two, not\n//     modelled\nvar v int\n",
			[][]string{{"a.go:8:", `("not modelled")`}}},
		{"row no tag names", ledgerDoc(good, "| orphan-row | x | none | guessed |"), tagged,
			[][]string{{"sim.md:12:", "[orphan-row] is named by no"}}},
		{"doc-only row tagged", ledgerDoc(good, docOnly), tagged + "\n// UD [ledger: doc-no-ud].\nvar v int\n",
			[][]string{{"a.go:6:", "doc-no-ud", "doc-only row (sim.md:12)"}}},
		{"malformed tag", ledgerDoc(good), tagged + "\n// Chosen [Ledger: Big_Id].\nvar v int\n",
			[][]string{{"a.go:6:", "malformed ledger tag"}}},
		{"duplicate id", ledgerDoc(good, good), tagged, [][]string{{"sim.md:12:", "[rnr-wait] is a second row", "line 11"}}},
		{"bad id", ledgerDoc("| RNR_wait | waits | none | guessed |"), tagged,
			[][]string{{"sim.md:11:", "[RNR_wait]: an id is"}, {"a.go:3:", "[ledger: rnr-wait] names no row"}}},
		{"short row", ledgerDoc(good, "| x | y | documented |"), tagged, [][]string{{"sim.md:12:", "3 cells, not 4"}}},
		{"no section", "# Sim\n", tagged, [][]string{{"sim.md:", "no \"## Fidelity ledger\" section"}}},
		{"source does not parse", ledgerDoc(good), "package x\nfunc (", [][]string{{"a.go:"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkLedger(ledgerFile{name: "sim.md", text: c.doc}, []ledgerFile{{name: "a.go", text: c.src}})
			if c.want == nil && len(got) != 0 {
				t.Errorf("problems in a consistent ledger:\n%s", strings.Join(got, "\n"))
			}
			for _, w := range c.want {
				if !anyHolds(got, w) {
					t.Errorf("no problem holds %q; got:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

// anyHolds reports whether one of problems contains every substring.
func anyHolds(problems, subs []string) bool {
	for _, p := range problems {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(p, s)
		}
		if all {
			return true
		}
	}
	return false
}
