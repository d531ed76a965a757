package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// treeCmds are script commands that build header trees from the cache:
//
//	cpdir SRC DST          copies a directory tree (regular files only)
//	replace FILE OLD NEW   replaces the one occurrence of OLD in FILE (\n in
//	                       OLD and NEW is a newline)
var treeCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"cpdir":   cpdirCmd,
	"replace": replaceCmd,
}

func cpdirCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cpdir SRC DST")
	}
	src, dst := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	ts.Check(err)
}

func replaceCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD NEW")
	}
	path := ts.MkAbs(args[0])
	b, err := os.ReadFile(path)
	ts.Check(err)
	old := strings.ReplaceAll(args[1], `\n`, "\n")
	repl := strings.ReplaceAll(args[2], `\n`, "\n")
	if n := strings.Count(string(b), old); n != 1 {
		ts.Fatalf("%s: %q occurs %d times, want once", args[0], old, n)
	}
	ts.Check(os.WriteFile(path, []byte(strings.Replace(string(b), old, repl, 1)), 0o644))
}
