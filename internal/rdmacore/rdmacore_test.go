package rdmacore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIncludeRoot(t *testing.T) {
	for _, v := range Versions {
		root, err := IncludeRoot(".", v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(root, "infiniband", "mlx5dv.h")); err != nil {
			t.Errorf("%s: %v", v, err)
		}
		if !strings.Contains(root, filepath.Join(".cache", "rdma-core", v)) {
			t.Errorf("%s: root %s is not in the cache", v, root)
		}
	}
}

func TestUnsupportedVersion(t *testing.T) {
	_, err := IncludeRoot(".", "43.0")
	if err == nil || !strings.Contains(err.Error(), "not supported") || !strings.Contains(err.Error(), "44.0, 56.1, 65.0") {
		t.Errorf("got %v", err)
	}
}

func TestModuleRootOutsideCheckout(t *testing.T) {
	_, err := ModuleRoot(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no mlx5gen checkout") {
		t.Errorf("got %v", err)
	}
}
