package replay

import (
	"bytes"
	"os"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/vectors"
)

// FuzzFile: any bytes, read as a vector file and replayed, give a
// verdict or an error, never a panic (replay has no recover).
func FuzzFile(f *testing.F) {
	for _, path := range []string{"testdata/bind_mw.json", "testdata/outstanding.json"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"cases":[{"id":"c","calls":[{"fn":"ibv_wr_start"},{"fn":"ibv_wr_complete"}],` +
		`"setup":{"qp_type":"RC","sq":{"wqebb_count":1,"wqebb_size":64,"max_post":1}},` +
		`"result":{"batches":[{"calls":[0,1],"ended_by":"ibv_wr_complete"}]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := vectors.Read("fuzz.json", bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, o := range File(v) {
			_ = o.Err
		}
	})
}
