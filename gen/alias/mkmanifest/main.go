// Command mkmanifest writes the manifest of a generated package (its
// exported types, hashed; see gen/alias) that mlx5gen embeds to decide
// which types of a package it generates elsewhere alias the committed one.
//
//	go run ./gen/alias/mkmanifest -dir generated/mlx5dv -o gen/alias/base.json
//
// go generate ./generated/ runs it after regenerating the package.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mlx5gen/mlx5gen/gen/alias"
)

func main() {
	dir := flag.String("dir", "mlx5dv", "directory of the generated package")
	out := flag.String("o", "base.json", "manifest to write")
	flag.Parse()
	m, err := alias.BuildDir(*dir)
	if err == nil {
		var b []byte
		if b, err = m.Marshal(); err == nil {
			err = os.WriteFile(*out, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mkmanifest: %v\n", err)
		os.Exit(1)
	}
}
