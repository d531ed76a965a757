package verbslink

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// innerEnv marks the run that cgocheck2 re-runs, so that it does not
// re-run itself.
const innerEnv = "MLX5GEN_CGOCHECK2_INNER"

// TestCgocheck2 re-runs the test double's tests (every bound function, and
// the pointer-rule tests here) built with GOEXPERIMENT=cgocheck2, which also
// checks every store of a Go pointer into C memory.
func TestCgocheck2(t *testing.T) {
	if os.Getenv(innerEnv) != "" {
		return // the re-run itself
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to re-run the tests: %v", err)
	}
	cmd := exec.Command(goTool, "test", "-count=1", "-tags", "mlx5gen_double",
		"github.com/mlx5gen/mlx5gen/generated/mlx5verbs", "github.com/mlx5gen/mlx5gen/internal/verbslink")
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=cgocheck2", "CGO_ENABLED=1", innerEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tests under GOEXPERIMENT=cgocheck2 failed: %v\n%s", err, out)
	}
	for _, pkg := range []string{"generated/mlx5verbs", "internal/verbslink"} {
		if !strings.Contains(string(out), "ok  \tgithub.com/mlx5gen/mlx5gen/"+pkg) {
			t.Errorf("%s did not pass under cgocheck2:\n%s", pkg, out)
		}
	}
}
