package main

import (
	"os"
	"path/filepath"
	"strings"
)

// hostileInputs writes the oversized inputs the scripts feed the
// commands: zeros.txt, more hex than wqe decode reads (70,000 zero
// digits), and big.hex, a 1088-byte WQE (17 WQEBBs).
func hostileInputs(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "zeros.txt"), []byte(strings.Repeat("0", 70000)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "big.hex"), []byte("0000000800123403"+strings.Repeat("0", 2*1088-16)), 0o644)
}
