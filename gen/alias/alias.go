// Package alias makes a package that mlx5gen generates in another module
// interoperate with mlx5gen's runtime: every type whose declaration,
// methods and constant values agree with the committed package
// (github.com/mlx5gen/mlx5gen/generated/mlx5dv, "the base") becomes a type
// alias of it, so that its constants and values are the runtime's own
// types. Constants are declared as generated, typed with the aliases, so a
// newer header's new members (IBV_ACCESS_FLUSH_GLOBAL) are of the base's
// type too. A type that differs (a function table with a new entry, a
// mirror whose validation changed), or that mentions one that differs,
// stays declared in the package, with its methods; the runtime cannot take
// it.
//
// The decision needs no rdma-core header of the base: the base is known
// by a manifest (base.json) of each of its exported types, computed from
// the committed package's source by Build and embedded here.
package alias

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Manifest describes the exported types of a generated package.
type Manifest struct {
	Types map[string]Type `json:"types"`
}

// Type describes one type by hashes of its declaration, of its methods'
// signatures and of its methods in full, and by its constants' values.
type Type struct {
	Spec    string            `json:"spec"`
	Sigs    string            `json:"sigs,omitempty"`
	Methods string            `json:"methods,omitempty"`
	Consts  map[string]string `json:"consts,omitempty"`
}

//go:embed base.json
var baseJSON []byte

// Base returns the manifest of the committed package generated/mlx5dv.
func Base() (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(baseJSON, &m); err != nil {
		return nil, fmt.Errorf("alias: embedded base.json: %w", err)
	}
	return &m, nil
}

// Build computes the manifest of a generated package from its files'
// names and contents (test files excluded by the caller).
func Build(names []string, contents [][]byte) (*Manifest, error) {
	s, err := scan(names, contents)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Types: map[string]Type{}}
	for name := range s.types {
		if ast.IsExported(name) {
			m.Types[name] = s.fingerprint(name)
		}
	}
	return m, nil
}

// Marshal renders a manifest as indented JSON with a final newline.
func (m *Manifest) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Decision says which types of a package alias the base and which are
// declared in it, each with the reason.
type Decision struct {
	Aliased []string
	Local   map[string]string // exported type -> why it is not an alias
}

// decide compares the package's exported types with the base's.
func decide(s *pkgScan, base *Manifest) Decision {
	ok := map[string]bool{}
	d := Decision{Local: map[string]string{}}
	for name := range s.types {
		if !ast.IsExported(name) {
			continue
		}
		if why := differs(s.fingerprint(name), base.Types[name], name, base); why != "" {
			d.Local[name] = why
			continue
		}
		ok[name] = true
	}
	// A type mentioning a local type cannot alias a base type that
	// mentions the base's: drop such types until nothing changes.
	for changed := true; changed; {
		changed = false
		for name := range ok {
			for _, r := range s.refs(name) {
				if !ok[r] {
					delete(ok, name)
					d.Local[name] = "it mentions " + r + ", which is declared here"
					changed = true
					break
				}
			}
		}
	}
	for name := range ok {
		d.Aliased = append(d.Aliased, name)
	}
	sort.Strings(d.Aliased)
	return d
}

// differs says why type t of the package cannot alias base type b, or "".
// An enum type (one with constants) may gain members and print them
// differently; any other type must match in its methods too.
func differs(t, b Type, name string, base *Manifest) string {
	if _, ok := base.Types[name]; !ok {
		return "the base package has no such type"
	}
	if t.Spec != b.Spec {
		return "its declaration differs from the base package's"
	}
	if t.Sigs != b.Sigs {
		return "its methods differ from the base package's"
	}
	if len(b.Consts) == 0 {
		if t.Methods != b.Methods {
			return "its methods differ from the base package's"
		}
		return ""
	}
	names := make([]string, 0, len(t.Consts))
	for c := range t.Consts {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		if v, ok := b.Consts[c]; ok && v != t.Consts[c] {
			return fmt.Sprintf("%s has another value in the base package (%s, here %s)", c, v, t.Consts[c])
		}
	}
	return ""
}

// BuildDir computes the manifest of the generated package in dir: its .go
// files that mlx5gen generated, without tests.
func BuildDir(dir string) (*Manifest, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	var contents [][]byte
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(b, []byte("// Code generated by mlx5gen; DO NOT EDIT.")) {
			continue
		}
		names = append(names, n)
		contents = append(contents, b)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("alias: %s holds no generated Go file", dir)
	}
	return Build(names, contents)
}
