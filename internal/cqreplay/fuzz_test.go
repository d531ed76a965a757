package cqreplay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes, read as a CQE vector file and replayed, give a
// verdict or an error, never a panic (the replay has no recover).
func FuzzParse(f *testing.F) {
	for _, name := range []string{"ex.json", "scatter.json", "errors.json", "signature.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		var file struct {
			CrossCheck json.RawMessage   `json:"cross_check"`
			Cases      []json.RawMessage `json:"cases"`
		}
		if err := json.Unmarshal(b, &file); err != nil {
			f.Fatal(err)
		}
		for _, c := range file.Cases[:3] {
			seed, _ := json.Marshal(map[string]any{"cross_check": file.CrossCheck, "cases": []json.RawMessage{c}})
			f.Add(seed)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, cases, err := Parse("fuzz.json", b)
		if err != nil {
			return
		}
		for _, o := range Replay(file, cases) {
			_ = o.Err
		}
	})
}
