package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGenerateScriptOutsidePackages runs scripts/generate.sh with its
// default output and checks that the package it writes is not among the
// module's packages (go list ./..., the set go vet ./... and go test ./...
// work on), so that neither sees it, and that it vets when named.
func TestGenerateScriptOutsidePackages(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	existed := map[string]bool{}
	for _, e := range before {
		existed[e.Name()] = true
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "generate.sh"))
	cmd.Dir = t.TempDir() // the script finds the checkout itself
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^wrote (.*)/consts\.go$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("generate.sh did not say where it wrote consts.go:\n%s", out)
	}
	dir := string(m[1])
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		// Remove what the script made at the top of the checkout.
		if top := strings.Split(rel, string(filepath.Separator))[0]; !existed[top] {
			t.Cleanup(func() { os.RemoveAll(filepath.Join(root, top)) })
		}
	}
	if !strings.Contains(string(out), dir) {
		t.Errorf("generate.sh does not print where the package is (%s):\n%s", dir, out)
	}
	list := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	list.Dir = root
	dirs, err := list.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	found := false
	for _, d := range strings.Fields(string(dirs)) {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			t.Errorf("go list ./... (so go vet ./... and go test ./...) includes the generated %s", d)
		}
		found = found || d == filepath.Join(root, "generated", "mlx5dv")
	}
	if !found {
		t.Fatalf("go list ./... does not list generated/mlx5dv; the check above proves nothing:\n%s", dirs)
	}
	vet := exec.Command("go", "vet", dir)
	vet.Dir = root
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("go vet %s: %v\n%s", dir, err, out)
	}
}

// TestHWCheckNoDevice runs scripts/hwcheck.sh where there is no RDMA
// device: it must stop at its first step with the hardware backend's
// no-device error and exit status 3, having run nothing, and leave no
// temporary directory behind.
func TestHWCheckNoDevice(t *testing.T) {
	if _, err := os.Stat("/sys/class/infiniband"); err == nil {
		t.Skip("this machine has RDMA devices: hwcheck.sh would run on them (the no-device path is what this test checks)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "hwcheck.sh"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("hwcheck.sh: %v, want exit status 3\n%s", err, out)
	}
	for _, want := range []string{"no RDMA device", "hwcheck.sh: no mlx5 device to check"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("hwcheck.sh's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "+ go test") {
		t.Errorf("hwcheck.sh ran a step without a device:\n%s", out)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("hwcheck.sh left %d entries in TMPDIR (%s)", len(left), left[0].Name())
	}
	bad := exec.Command("bash", filepath.Join(root, "scripts", "hwcheck.sh"), "-device")
	if out, err := bad.CombinedOutput(); !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "-device needs a device name") {
		t.Errorf("hwcheck.sh -device: %v, want exit status 2 and a usage message\n%s", err, out)
	}
}
